package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code logging:} section: the gateway's access log; and the summary of a loaded policy. */
class LoggingSectionTest {

  static final String RULE = String.join("\n",
      "rules:",
      "  api: { limits: [{ type: token-bucket, burst: 5, refill: 5, period: 1m }] }",
      "routes:",
      "  - { paths: [/api/**], rules: [api] }",
      "");

  static LoadedPolicy load(String yaml, Path source) throws ConfigException {
    return PolicyLoader.parse(yaml, "p.yaml", source, Map.of());
  }

  @Test
  void absent_isOff_andNotRendered() throws Exception {
    LoadedPolicy p = load(RULE, null);
    assertThat(p.config().logging()).isEqualTo(LoggingSettings.defaults());
    assertThat(p.effective()).doesNotContainKey("logging");
  }

  @Test
  void json_toAFile_relativeToThePolicyFile_isRendered() throws Exception {
    LoadedPolicy p = load(RULE + "logging: { access: json, accessFile: logs/access.log }\n",
        Path.of("/etc/sluice/policy.yaml"));
    assertThat(p.config().logging().access()).isEqualTo(LoggingSettings.Access.JSON);
    assertThat(p.config().logging().accessFile())
        .isEqualTo(Path.of("/etc/sluice/logs/access.log"));
    assertThat(p.effective().get("logging"))
        .isEqualTo(Map.of("access", "json", "accessFile", "/etc/sluice/logs/access.log"));
  }

  @Test
  void common_withDashOrNoFile_isStandardOutput() throws Exception {
    assertThat(load(RULE + "logging: { access: common, accessFile: '-' }\n", null).config()
        .logging()).isEqualTo(new LoggingSettings(LoggingSettings.Access.COMMON, null));
    assertThat(load(RULE + "logging: { access: common }\n", null).config().logging())
        .isEqualTo(new LoggingSettings(LoggingSettings.Access.COMMON, null));
    assertThat(load(RULE + "logging: { access: combined }\n", null).config().logging())
        .isEqualTo(new LoggingSettings(LoggingSettings.Access.COMBINED, null));
    // YAML 1.1 reads a bare off as false; both mean no access log.
    assertThat(load(RULE + "logging: { access: off }\n", null).config().logging().access())
        .isEqualTo(LoggingSettings.Access.OFF);
  }

  @Test
  void badFormat_andUnknownKey_nameFileLineFieldAndExpectation() {
    assertThatThrownBy(() -> load(RULE + "logging:\n  access: apache\n  file: x\n", null))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(
            e.errors().stream().map(ConfigError::toString).toList()).containsExactly(
                "p.yaml:6: logging.access : \"apache\" (expected: off, common, combined or json)",
                "p.yaml:7: logging.file : unknown key (expected: one of access, accessFile)"));
  }

  @Test
  void summary_countsInTheSingular_andWarnsAboutNoRules() throws Exception {
    LoadedPolicy one = load(RULE, null);
    assertThat(one.summary()).isEqualTo("1 rule, 1 route, global []");
    assertThat(one.warnings()).isEmpty();
    LoadedPolicy none = load("gateway: { maxBodyBytes: 1024 }\n", null);
    assertThat(none.summary()).isEqualTo("0 rules, 0 routes, global []");
    assertThat(none.warnings()).containsExactly("p.yaml has no rules: every request is allowed "
        + "(add a rules: section and routes that use it)");
  }
}
