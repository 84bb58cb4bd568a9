package dev.sluice.policy;

import static dev.sluice.policy.PolicyLoaderTest.errors;
import static dev.sluice.policy.PolicyLoaderTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.policy.RequestTarget;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code path:} and a route's {@code caseInsensitive}; --dry-run keeps every other section. */
class PathRulesTest {

  private static final String POLICY = String.join("\n",
      "path: {parameters: keep, encodedSlashes: keep}",
      "rules:",
      "  strict: {limits: [{type: fixed-window, limit: 1, window: 1m}]}",
      "routes:",
      "  - {name: strict, paths: [/strict/**], caseInsensitive: true, rules: [strict]}",
      "logging: {access: json}",
      "");

  @Test
  void pathAndCaseInsensitive_areRead_andShownByCheck() throws Exception {
    PolicyConfig c = parse(POLICY, Map.of()).config();
    assertThat(c.policy().paths()).isEqualTo(new RequestTarget.Rules(
        RequestTarget.Parameters.KEEP, RequestTarget.EncodedSlashes.KEEP));
    assertThat(c.policy().routes().get(0).caseInsensitive()).isTrue();
    Map<String, Object> shown = EffectivePolicy.render(c);
    assertThat(shown.get("path")).isEqualTo(Map.of("parameters", "keep",
        "encodedSlashes", "keep"));
    assertThat(PolicyFormat.toYaml(shown)).contains("caseInsensitive: true");
  }

  @Test
  void defaults_areStripAndRefuse_andNotShown() throws Exception {
    PolicyConfig c = parse("rules: {}\n", Map.of()).config();
    assertThat(c.policy().paths()).isEqualTo(RequestTarget.Rules.defaults());
    assertThat(EffectivePolicy.render(c)).doesNotContainKey("path");
  }

  @Test
  void badValues_nameTheFieldAndWhatIsExpected() {
    assertThat(errors("path: {parameters: drop}\n")).anySatisfy(e ->
        assertThat(e).contains(":1: path.parameters").contains("drop")
            .contains("strip").contains("refuse"));
    assertThat(errors("path: {slashes: keep}\n")).anySatisfy(e ->
        assertThat(e).contains("path.slashes").contains("encodedSlashes"));
  }

  /** Issue 20, item 12: --dry-run dropped logging: (and so the access log). */
  @Test
  void issue20_dryRun_keepsEverySection() throws Exception {
    PolicyConfig c = parse(POLICY, Map.of()).config();
    PolicyConfig dry = c.withDryRun();
    assertThat(dry.policy().dryRun()).isTrue();
    assertThat(dry.logging()).isEqualTo(c.logging());
    assertThat(dry.logging().access()).isEqualTo(LoggingSettings.Access.JSON);
    assertThat(dry.policy().paths()).isEqualTo(c.policy().paths());
    assertThat(dry.response()).isSameAs(c.response());
    assertThat(dry.policy().rules().keySet()).isEqualTo(c.policy().rules().keySet());
    assertThat(dry.policy().rules().get("strict").mode()).isEqualTo(dev.sluice.core.Mode.SHADOW);
    assertThat(dry.offSwitches()).isEqualTo(c.offSwitches());
  }
}
