package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code domains:} section: envoyproxy/ratelimit's shape, its matching, Sluice's extras. */
class DomainsSectionTest {

  /** envoyproxy/ratelimit's messaging example, as its own file (top-level domain:). */
  static final String MESSAGING = String.join("\n",
      "domain: messaging",
      "descriptors:",
      "  - key: message_type",
      "    value: marketing",
      "    descriptors:",
      "      - key: to_number",
      "        rate_limit:",
      "          unit: day",
      "          requests_per_unit: 5",
      "  - key: to_number",
      "    rate_limit:",
      "      unit: day",
      "      requests_per_unit: 100",
      "");

  static RlsDomains domains(String yaml) throws ConfigException {
    return PolicyLoader.parse(yaml, "p.yaml", null, Map.of()).config().domains();
  }

  static RlsDomains.Entries entries(String... kv) {
    return new RlsDomains.Entries() {
      public int size() {
        return kv.length / 2;
      }

      public String key(int i) {
        return kv[2 * i];
      }

      public String value(int i) {
        return kv[2 * i + 1];
      }
    };
  }

  @Test
  void envoyproxyFile_loadsUnchanged_andMatchesLevelByLevel() throws Exception {
    RlsDomains d = domains(MESSAGING);
    RlsDescriptor marketing = d.match("messaging",
        entries("message_type", "marketing", "to_number", "2061234567"));
    assertThat(marketing.path()).isEqualTo("messaging.message_type=marketing.to_number");
    assertThat(marketing.coreLimits()).extracting(Limit::capacity).containsExactly(5L);
    assertThat(marketing.coreLimits().get(0).windowNanos())
        .isEqualTo(Duration.ofDays(1).toNanos());
    assertThat(d.match("messaging", entries("to_number", "2061234567")).requestsPerUnit())
        .isEqualTo(100);
    // A node without a limit of its own, a partial match and an unknown domain: no limit.
    assertThat(d.match("messaging", entries("message_type", "marketing"))).isNull();
    assertThat(d.match("messaging", entries("message_type", "other", "to_number", "1"))).isNull();
    assertThat(d.match("nope", entries("to_number", "1"))).isNull();
  }

  @Test
  void wildcard_prefersExact_thenLongestPrefix_thenKeyOnly() throws Exception {
    RlsDomains d = domains(String.join("\n",
        "domains:",
        "  - domain: d",
        "    descriptors:",
        "      - {key: path, value: /api/users, rate_limit: {unit: minute, requests_per_unit: 1}}",
        "      - {key: path, value: /api/*, rate_limit: {unit: minute, requests_per_unit: 2}}",
        "      - {key: path, value: /api/v2/*, rate_limit: {unit: minute, requests_per_unit: 3}}",
        "      - {key: path, rate_limit: {unit: minute, requests_per_unit: 4}}",
        ""));
    assertThat(d.match("d", entries("path", "/api/users")).requestsPerUnit()).isEqualTo(1);
    assertThat(d.match("d", entries("path", "/api/x")).requestsPerUnit()).isEqualTo(2);
    assertThat(d.match("d", entries("path", "/api/v2/x")).requestsPerUnit()).isEqualTo(3);
    assertThat(d.match("d", entries("path", "/other")).requestsPerUnit()).isEqualTo(4);
  }

  @Test
  void sluiceExtensions_severalLimits_shadow_unlimited_blocked_replaces() throws Exception {
    RlsDomains d = domains(String.join("\n",
        "domains:",
        "  - domain: api",
        "    descriptors:",
        "      - key: user",
        "        rate_limit: {name: per-user, unit: second, requests_per_unit: 10}",
        "        limits:",
        "          - {type: token-bucket, burst: 20, refill: 5, period: 1s}",
        "          - {type: sliding-window, limit: 1000, window: 1d}",
        "        onStoreError: deny",
        "        shadow_mode: true",
        "      - {key: ldap, rate_limit: {unlimited: true}}",
        "      - {key: ip, value: 50.0.0.5, rate_limit: {unit: second, requests_per_unit: 0}}",
        "      - key: vip",
        "        rate_limit: {unit: minute, requests_per_unit: 99, replaces: [{name: per-user}]}",
        ""));
    RlsDescriptor user = d.match("api", entries("user", "u1"));
    assertThat(user.coreLimits()).extracting(Limit::capacity).containsExactly(10L, 20L, 1000L);
    assertThat(user.rule(3).dimensions()).containsExactly("d3");
    assertThat(user.rule(3).name()).isEqualTo(user.rule(0).name());
    assertThat(user.rule(0).mode()).isEqualTo(Mode.SHADOW);
    assertThat(user.onStoreError()).isEqualTo(OnStoreError.DENY);
    assertThat(user.name()).isEqualTo("per-user");
    assertThat(d.match("api", entries("ldap", "x")).unlimited()).isTrue();
    assertThat(d.match("api", entries("ip", "50.0.0.5")).blocked()).isTrue();
    assertThat(d.match("api", entries("vip", "a")).replaces()).containsExactly("per-user");
  }

  @Test
  void effectivePolicy_rendersDomains_andLoadsBack() throws Exception {
    LoadedPolicy p = PolicyLoader.parse(MESSAGING, "p.yaml", null, Map.of());
    String yaml = PolicyFormat.toYaml(EffectivePolicy.render(p.config()));
    RlsDomains again = domains(yaml);
    assertThat(again.match("messaging",
        entries("message_type", "marketing", "to_number", "1")).requestsPerUnit()).isEqualTo(5);
  }

  @Test
  void badInput_fileLineErrors() {
    List<String> errors = PolicyLoaderTest.errors(String.join("\n",
        "domains:",
        "  - domain: d",
        "    descriptors:",
        "      - key: a",
        "        rate_limit: {unit: fortnight, requests_per_unit: 5}",
        "      - key: b",
        "        rate_limit: {unit: second, requests_per_unit: -1}",
        "      - key: c",
        "        rate_limit: {unit: second, requests_per_unit: 1, unlimted: true}",
        "      - value: x",
        "      - {key: e, rate_limit: {unit: second, requests_per_unit: 1}}",
        "      - {key: e, rate_limit: {unit: second, requests_per_unit: 2}}",
        "  - descriptors: []",
        ""));
    assertThat(errors).anySatisfy(e -> assertThat(e).startsWith("p.yaml:5")
        .contains("unit").contains("fortnight").contains("second, minute, hour, day"));
    assertThat(errors).anySatisfy(e -> assertThat(e).startsWith("p.yaml:7")
        .contains("requests_per_unit").contains("0.."));
    assertThat(errors).anySatisfy(e -> assertThat(e).startsWith("p.yaml:9")
        .contains("unlimted").contains("did you mean 'unlimited'"));
    assertThat(errors).anySatisfy(e -> assertThat(e).startsWith("p.yaml:10")
        .contains("key").contains("missing"));
    assertThat(errors).anySatisfy(e -> assertThat(e).startsWith("p.yaml:12")
        .contains("appears twice"));
    assertThat(errors).anySatisfy(e -> assertThat(e).startsWith("p.yaml:13")
        .contains("domain").contains("missing"));
  }
}
