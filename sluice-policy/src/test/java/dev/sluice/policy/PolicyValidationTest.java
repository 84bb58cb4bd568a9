package dev.sluice.policy;

import static dev.sluice.policy.PolicyLoaderTest.errors;
import static dev.sluice.policy.PolicyLoaderTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Policies that loaded but could not run (issue 7): each is now an error with file and line. */
class PolicyValidationTest {

  private static String policy(String... lines) {
    return String.join("\n", lines) + "\n";
  }

  /** Every request of such a route threw in the handler and was let through. */
  @Test
  void routeCostAboveTheCapacityOfItsRuleOrAGlobalRule_isRejectedAtLoad() {
    String yaml = policy(
        "rules:",
        "  search:",
        "    limits: [{type: fixed-window, limit: 5, window: 1s}]",
        "  backstop:",
        "    limits: [{type: score, maxScore: 3, perAction: 1, decay: 1s}]",
        "routes:",
        "  - {name: search, paths: [/search/**], rules: [search], cost: 10}",
        "  - name: export",
        "    paths: [/export/**]",
        "    cost: 4",
        "  - {name: cheap, paths: [/cheap/**], rules: [search], cost: 3}",
        "global: [backstop]");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:7: routes[0].cost : 10 (expected: <= 5, the capacity of limit 'search' in rule "
            + "'search')",
        "p.yaml:7: routes[0].cost : 10 (expected: <= 3, the capacity of limit 'backstop' in "
            + "global rule 'backstop')",
        "p.yaml:10: routes[1].cost : 4 (expected: <= 3, the capacity of limit 'backstop' in "
            + "global rule 'backstop')");
  }

  @Test
  void routeCost_aboveTheCapacityOfARuleThatIsOff_isAccepted() throws Exception {
    String yaml = policy(
        "rules:",
        "  global:",
        "    offSwitch: RATE_LIMIT_MAX",
        "    limits: [{type: fixed-window, limit: 2, window: 1s}]",
        "routes:",
        "  - {name: bulk, paths: [/bulk/**], cost: 5}",
        "global: [global]");
    assertThat(parse(yaml, Map.of("RATE_LIMIT_MAX", "0")).config().policy().routes())
        .hasSize(1);
    assertThat(errors(yaml)).hasSize(1);
  }

  /** Core rejects these; the loader showed core's PT0.0005S instead of what the file says. */
  @Test
  void durationsBelowOneMillisecond_areRejectedAtTheirLine_asWritten() {
    String yaml = policy(
        "rules:",
        "  api:",
        "    limits: [{type: token-bucket, burst: 5, refill: 1, period: 500us}]",
        "  w:",
        "    limits: [{type: sliding-window, limit: 5, window: 1ns}]",
        "    ban: 999us",
        "  s:",
        "    limits: [{type: score, maxScore: 5, perAction: 1, decay: '${DECAY:-1}us'}]");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:3: rules.api.limits[0].period : \"500us\" (expected: >= 1ms)",
        "p.yaml:5: rules.w.limits[0].window : \"1ns\" (expected: >= 1ms)",
        "p.yaml:6: rules.w.ban : \"999us\" (expected: >= 1ms)",
        "p.yaml:8: rules.s.limits[0].decay : \"1us\" (expected: >= 1ms)");
  }

  /** "-1s" was told "a duration >= 0" where 0 is rejected too. */
  @Test
  void negativeDuration_whereZeroIsRejectedToo_isToldAboveZero() {
    String yaml = policy(
        "rules:",
        "  api:",
        "    limits: [{type: fixed-window, limit: 5, window: -1s}]",
        "gateway:",
        "  idleTimeout: -1s",
        "cors:",
        "  maxAge: -1s");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:3: rules.api.limits[0].window : \"-1s\" (expected: a duration > 0, like 500ms or "
            + "60s)",
        "p.yaml:5: gateway.idleTimeout : \"-1s\" (expected: a duration > 0, like 500ms or 60s)",
        "p.yaml:7: cors.maxAge : \"-1s\" (expected: a duration >= 0, like 0s, 500ms or 60s)");
  }

  /**
   * A non-ASCII rule name passed check and showed as "?n?code rule" in RateLimit-Policy; in a
   * shared bucket or a route's rule list it crashed the loader with a stack trace.
   */
  @Test
  void nonAsciiNames_areRejectedAtTheirLine() {
    String yaml = policy(
        "rules:",
        "  \"ünicode rule\":",
        "    limits: [{type: fixed-window, limit: 5, window: 1s}]",
        "  api:",
        "    sharedBucket: \"ünknown\"",
        "    limits: [{type: fixed-window, name: \"lïmit\", limit: 5, window: 1s}]",
        "routes:",
        "  - {name: \"rüte\", paths: [/x/**], rules: [\"äpi\"]}");
    String ascii = "(expected: 1..128 printable ASCII characters, not blank)";
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:2: rules.\"ünicode rule\" : \"ünicode rule\" " + ascii,
        "p.yaml:5: rules.api.sharedBucket : \"ünknown\" " + ascii,
        "p.yaml:6: rules.api.limits[0].name : \"lïmit\" " + ascii,
        "p.yaml:8: routes[0].name : \"rüte\" " + ascii,
        "p.yaml:8: routes[0].rules[0] : \"äpi\" " + ascii);
  }
}
