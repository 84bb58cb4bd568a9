package dev.sluice.policy;

import static dev.sluice.policy.PolicyLoaderTest.errors;
import static dev.sluice.policy.PolicyLoaderTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Route;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** allow:, mode:, route hosts/headers/from, rule delay, response JSON templates. */
class PolicyFeaturesTest {

  private static final String POLICY = String.join("\n",
      "allow: [10.0.0.0/8, '::1/128']",             // 1
      "mode: shadow",                               // 2
      "rules:",                                     // 3
      "  api:",                                     // 4
      "    delay: 500ms",                           // 5
      "    delayQueue: 4",                          // 6
      "    limits:",                                // 7
      "      - {type: token-bucket, burst: 1, refill: 10, period: 1s}",
      "routes:",                                    // 9
      "  - name: v2",                               // 10
      "    hosts: [api.example.com, '*.example.org']",
      "    headers: {X-Api-Version: '2', Authorization: '*'}",
      "    from: [192.0.2.0/24]",                   // 13
      "    rules: [api]",                           // 14
      "response:",                                  // 15
      "  jsonTemplate: '{\"error\":\"slow down\",\"retryAfter\":{{retryAfter}},\"rule\":{{rule}}}'",
      "  unavailableJsonTemplate: '{\"error\":\"down\",\"retryAfter\":{{retryAfter}}}'",
      "");

  @Test
  void everyNewKey_isRead_andShownByCheck() throws Exception {
    PolicyConfig c = parse(POLICY, Map.of()).config();
    assertThat(c.policy().allow().toList()).containsExactly("10.0.0.0/8", "::1/128");
    assertThat(c.policy().dryRun()).isTrue();
    Rule api = c.policy().rules().get("api");
    assertThat(api.mode()).isEqualTo(Mode.SHADOW);
    assertThat(api.delay()).isEqualTo(Duration.ofMillis(500));
    assertThat(api.delayQueue()).isEqualTo(4);
    Route v2 = c.policy().routes().get(0);
    assertThat(v2.hosts()).containsExactly("api.example.com", "*.example.org");
    assertThat(v2.headers()).containsExactly(Map.entry("x-api-version", "2"),
        Map.entry("authorization", "*"));
    assertThat(v2.from().toList()).containsExactly("192.0.2.0/24");
    assertThat(c.responses().jsonTemplate()).contains("{{retryAfter}}");
    assertThat(c.responses().unavailableJsonTemplate()).contains("\"down\"");

    Map<String, Object> shown = EffectivePolicy.render(c);
    assertThat(shown.get("mode")).isEqualTo("shadow");
    assertThat(shown.get("allow")).isEqualTo(List.of("10.0.0.0/8", "::1/128"));
    @SuppressWarnings("unchecked")
    Map<String, Object> rule = (Map<String, Object>) ((Map<String, Object>) shown.get("rules"))
        .get("api");
    assertThat(rule).containsEntry("delay", "500ms").containsEntry("delayQueue", 4);
    @SuppressWarnings("unchecked")
    Map<String, Object> route = (Map<String, Object>) ((List<Object>) shown.get("routes")).get(0);
    assertThat(route).containsEntry("from", List.of("192.0.2.0/24"))
        .containsKey("hosts").containsKey("headers");
  }

  @Test
  void withoutTheNewKeys_nothingChanges() throws Exception {
    PolicyConfig c = parse(POLICY.lines().filter(l -> !l.startsWith("allow")
        && !l.startsWith("mode")).reduce("", (a, b) -> a + b + "\n"), Map.of()).config();
    assertThat(c.policy().allow().isEmpty()).isTrue();
    assertThat(c.policy().dryRun()).isFalse();
    assertThat(c.policy().rules().get("api").mode()).isEqualTo(Mode.ENFORCE);
    assertThat(EffectivePolicy.render(c)).doesNotContainKeys("mode", "allow");
  }

  @Test
  void badValues_nameFileLineFieldValueAndExpectation() {
    String bad = POLICY
        .replace("allow: [10.0.0.0/8, '::1/128']", "allow: [10.0.0.0/8, 10.0.0.0/40]")
        .replace("mode: shadow", "mode: dry")
        .replace("delay: 500ms", "delay: 2m")
        .replace("delayQueue: 4", "delayQueue: 0")
        .replace("'*.example.org'", "'bad host'")
        .replace("X-Api-Version: '2'", "'X Api': '2'")
        .replace("from: [192.0.2.0/24]", "from: [192.0.2.0/24, nowhere]")
        .replace("{{rule}}}'", "{{rules}}}'")
        .replace("{\"error\":\"down\",\"retryAfter\":{{retryAfter}}}", "{\"error\":");
    assertThat(errors(bad)).containsExactly(
        "p.yaml:1: allow[1] : \"10.0.0.0/40\" (expected: an IPv4 or IPv6 network like "
            + "10.0.0.0/8 or ::1/128)",
        "p.yaml:2: mode : \"dry\" (expected: one of enforce, shadow)",
        "p.yaml:5: rules.api.delay : \"2m\" (expected: a duration in 0s..1m)",
        "p.yaml:6: rules.api.delayQueue : 0 (expected: a whole number > 0)",
        "p.yaml:11: routes[0].hosts[1] : \"bad host\" (expected: a host name like "
            + "api.example.com or *.example.com)",
        "p.yaml:12: routes[0].headers.\"X Api\" : \"X Api\" (expected: an HTTP header name like "
            + "X-Api-Version)",
        "p.yaml:13: routes[0].from[1] : \"nowhere\" (expected: an IPv4 or IPv6 network like "
            + "10.0.0.0/8 or ::1/128)",
        "p.yaml:16: response.jsonTemplate : \"{\\\"error\\\":\\\"slow down\\\",\\\"retryAfter\\\":"
            + "{{retryAfter}},\\\"rule\\\":{{rules}}}\" (expected: a JSON object whose placeholders "
            + "are [retryAfter, retryAfterMs, limit, remaining, rule, limitName] (placeholder {{rules}} is not "
            + "one of [retryAfter, retryAfterMs, limit, remaining, rule, limitName]))",
        "p.yaml:17: response.unavailableJsonTemplate : \"{\\\"error\\\":\" (expected: a JSON "
            + "object whose placeholders are [retryAfter, retryAfterMs, limit, remaining, rule, "
            + "limitName] (not one JSON object or array once placeholders are filled))");
  }

  @Test
  void delayQueue_withoutDelay_isRejected() {
    assertThat(errors(POLICY.replace("    delay: 500ms\n", ""))).containsExactly(
        "p.yaml:5: rules.api.delayQueue : 4 (expected: no delayQueue without a delay (set "
            + "delay: too, like 500ms))");
  }
}
