package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Decision;
import dev.sluice.core.FailingStore;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import dev.sluice.redis.RedisStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetricsTest {

  final List<String> lines = new ArrayList<>();
  final Metrics metrics = new Metrics((level, message, fields) -> {
    StringBuilder sb = new StringBuilder(level).append(' ').append(message);
    for (int i = 0; i + 1 < fields.length; i += 2) {
      sb.append(' ').append(fields[i]).append('=').append(fields[i + 1]);
    }
    lines.add(sb.toString());
  });
  final long[] now = {Long.MAX_VALUE - 1_000_000_000L};
  final RateLimiter limiter = RateLimiter.of(Store.memory(() -> now[0], 1000));

  static Rule rule(String name, Mode mode, Duration ban) {
    return Rule.builder(name).limit(Limit.fixedWindow(name, 1, Duration.ofSeconds(10)))
        .mode(mode).ban(ban).build();
  }

  @Test
  void decisions_countedByRuleAndOutcome() {
    Rule r = rule("analysis", Mode.ENFORCE, Duration.ZERO);
    metrics.decision("http", List.of(r), limiter.check(r, Identity.ip("1.2.3.4")), 0);
    metrics.decision("http", List.of(r), limiter.check(r, Identity.ip("1.2.3.4")), 0);
    metrics.decision("http", List.of(r), limiter.check(r, Identity.ip("1.2.3.4")), 0);
    assertThat(metrics.decisions("analysis", "allowed")).isEqualTo(1);
    assertThat(metrics.decisions("analysis", "refused")).isEqualTo(2);
    assertThat(dev.sluice.server.Prom.canon(metrics.render()))
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"allowed\"} 1\n")
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"refused\"} 2\n")
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"shadow_refused\"} 0\n")
        .contains("# TYPE sluice_decisions_total counter\n");
  }

  @Test
  void shadowRefusal_countedAndLoggedOnce() {
    Rule r = rule("dry", Mode.SHADOW, Duration.ZERO);
    for (int i = 0; i < 5; i++) {
      metrics.decision("http", List.of(r), limiter.check(r, Identity.ip("1.2.3.4")), 0);
    }
    assertThat(metrics.decisions("dry", "shadow_refused")).isEqualTo(4);
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_shadow_refusals_total{rule=\"dry\"} 4\n");
    assertThat(lines).hasSize(1).allMatch(l -> l.startsWith("INFO shadow refusal"));
  }

  @Test
  void ban_countedOnce_andLoggedOnceWithItsKey() {
    Rule r = rule("chat", Mode.ENFORCE, Duration.ofSeconds(30));
    for (int i = 0; i < 3; i++) {
      Decision d = limiter.check(r, Identity.ip("1.2.3.4"));
      metrics.decision("ws-action", List.of(r), d, 0);
      if (d.banApplied()) {
        metrics.banApplied("ws-action", d, r.keyText(Identity.ip("1.2.3.4")));
      }
    }
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_bans_total{rule=\"chat\"} 1\n");
    assertThat(lines).containsExactly(
        "WARN ban applied rule=chat key=1.2.3.4 limit=chat length=30s kind=ws-action");
  }

  @Test
  void storeError_countedAsDegraded() {
    Store broken = new FailingStore();
    Rule r = Rule.builder("w").limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(1)))
        .onStoreError(OnStoreError.DENY).build();
    metrics.decision("http", List.of(r), RateLimiter.of(broken).check(r, Identity.ip("1.2.3.4")), 0);
    assertThat(metrics.decisions("w", "degraded")).isEqualTo(1);
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_store_errors_total 1\n");
  }

  @Test
  void ruleLabels_areBounded() {
    for (int i = 0; i < Metrics.MAX_LABELS + 50; i++) {
      Rule r = rule("r" + i, Mode.ENFORCE, Duration.ZERO);
      metrics.decision("http", List.of(r), limiter.check(r, Identity.ip("1.2.3.4")), 0);
    }
    String text = dev.sluice.server.Prom.canon(metrics.render());
    assertThat(text.lines().filter(l -> l.startsWith("sluice_decisions_total{"))
        .count()).isEqualTo((Metrics.MAX_LABELS + 1) * 4L);
    assertThat(metrics.decisions("_other", "allowed")).isEqualTo(50);
  }

  @Test
  void webSockets_gaugeAndCloses_reloads_generated_trackedKeys() {
    metrics.webSocketOpened();
    metrics.webSocketOpened();
    metrics.webSocketClosed(1013);
    metrics.webSocketClosed(70000);
    metrics.webSocketOpened();
    metrics.generated(429);
    metrics.generated(413);
    metrics.generated(429);
    metrics.reload(true);
    metrics.reload(false);
    metrics.reload(false);
    metrics.trackedKeys(() -> 42);
    assertThat(dev.sluice.server.Prom.canon(metrics.render()))
        .contains("sluice_websocket_connections 1\n")
        .contains("sluice_websocket_closes_total{code=\"1013\"} 1\n")
        .contains("sluice_websocket_closes_total{code=\"other\"} 1\n")
        .contains("sluice_generated_responses_total{status=\"429\"} 2\n")
        .contains("sluice_generated_responses_total{status=\"413\"} 1\n")
        .contains("sluice_reloads_total{result=\"ok\"} 1\n")
        .contains("sluice_reloads_total{result=\"failed\"} 2\n")
        .contains("sluice_tracked_keys 42\n");
  }

  /** Issue 7: a metric for the store's connection and circuit, between the two log lines. */
  @Test
  void store_readinessConnectionAttemptsAndCircuit() {
    StoreHealth store = StoreHealth.remote("redis://10.0.0.7:6379");
    metrics.store(store);
    store.on(RedisStore.Event.CONNECT_FAILED, "Connection refused");
    store.on(RedisStore.Event.CONNECT_FAILED, "Connection refused");
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_store_ready 0\n")
        .contains("sluice_store_connected 0\n")
        .contains("sluice_store_connect_failures_total 2\n")
        .contains("sluice_store_circuit{state=\"closed\"} 1\n");
    store.on(RedisStore.Event.READY, "redis://10.0.0.7:6379");
    store.on(RedisStore.Event.CIRCUIT_OPENED, "failure rate 60 %");
    store.on(RedisStore.Event.CIRCUIT_HALF_OPEN, "open for 500 ms");
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_store_ready 1\n")
        .contains("sluice_store_connected 1\n")
        .contains("sluice_store_circuit{state=\"closed\"} 0\n")
        .contains("sluice_store_circuit{state=\"open\"} 0\n")
        .contains("sluice_store_circuit{state=\"half_open\"} 1\n")
        .contains("sluice_store_circuit_opened_total 1\n");
  }

  @Test
  void store_memory_isReadyAndConnected() {
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_store_ready 1\n")
        .contains("sluice_store_connected 1\n")
        .contains("sluice_store_connect_failures_total 0\n");
  }

  @Test
  void registeredRules_showZeros_andLabelsAreEscaped() {
    metrics.registerRules(List.of("a\"b"));
    assertThat(dev.sluice.server.Prom.canon(metrics.render()))
        .contains("sluice_decisions_total{rule=\"a\\\"b\",outcome=\"allowed\"} 0\n");
  }
  /** Issue 7: only the deciding rule was counted, so the backstop showed 0 while spent. */
  @Test
  void everyEvaluatedRule_isCounted_notOnlyTheDecidingOne() {
    Rule api = Rule.builder("api").limit(Limit.fixedWindow("api", 2, Duration.ofSeconds(10)))
        .build();
    Rule backstop = Rule.builder("backstop")
        .limit(Limit.fixedWindow("backstop", 100, Duration.ofSeconds(10))).build();
    Rule dry = Rule.builder("dry").limit(Limit.fixedWindow("dry", 1, Duration.ofSeconds(10)))
        .mode(Mode.SHADOW).build();
    Rule off = Rule.builder("off").limit(Limit.fixedWindow("off", 1, Duration.ofSeconds(10)))
        .mode(Mode.OFF).build();
    List<Rule> checked = List.of(api, off, backstop, dry);
    for (int i = 0; i < 3; i++) {
      metrics.decision("http", checked, limiter.check(checked, Identity.ip("1.2.3.4"), 1), 0);
    }
    assertThat(metrics.decisions("api", "allowed")).isEqualTo(2);
    assertThat(metrics.decisions("api", "refused")).isEqualTo(1);
    assertThat(metrics.decisions("backstop", "allowed")).isEqualTo(3);
    assertThat(metrics.decisions("dry", "allowed")).isEqualTo(1);
    assertThat(metrics.decisions("dry", "shadow_refused")).isEqualTo(2);
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).doesNotContain("rule=\"off\"")
        .contains("sluice_shadow_refusals_total{rule=\"dry\"} 2\n");
  }

  @Test
  void everyEvaluatedRule_isDegraded_whenTheStoreFails() {
    Rule a = Rule.builder("a").limit(Limit.fixedWindow("a", 1, Duration.ofSeconds(1))).build();
    Rule b = Rule.builder("b").limit(Limit.fixedWindow("b", 1, Duration.ofSeconds(1))).build();
    RateLimiter down = RateLimiter.of(new FailingStore());
    metrics.decision("http", List.of(a, b), down.check(List.of(a, b), Identity.ip("1.2.3.4"), 1), 0);
    assertThat(metrics.decisions("a", "degraded")).isEqualTo(1);
    assertThat(metrics.decisions("b", "degraded")).isEqualTo(1);
    assertThat(dev.sluice.server.Prom.canon(metrics.render())).contains("sluice_store_errors_total 1\n");
  }

  /** Issue 7: a decision that threw logged a stack trace per request and was counted nowhere. */
  @Test
  void decisionFailure_countedPerRule_loggedOncePerRulePerMinute_withTheError() {
    long[] clock = {Long.MIN_VALUE + 5};
    List<Object[]> logged = new ArrayList<>();
    Metrics m = new Metrics((level, message, fields) -> logged.add(fields), () -> clock[0]);
    List<Rule> rules = List.of(rule("payments", Mode.ENFORCE, Duration.ZERO),
        rule("backstop", Mode.ENFORCE, Duration.ZERO));
    RuntimeException bug = new IllegalArgumentException("cost : 10 (expected: <= 5)");
    m.decisionFailed("http", rules, bug);
    m.decisionFailed("http", rules, bug);
    clock[0] += Duration.ofSeconds(59).toNanos();
    m.decisionFailed("http", rules, bug);
    clock[0] += Duration.ofSeconds(1).toNanos();
    m.decisionFailed("http", rules, bug);
    m.decisionFailed("http", List.of(), bug);
    assertThat(logged).hasSize(3);
    assertThat(logged.get(0)).containsExactly("kind", "http", "rules", "payments,backstop",
        "error", bug);
    assertThat(logged.get(2)).contains("_none");
    assertThat(dev.sluice.server.Prom.canon(m.render()))
        .contains("sluice_decision_errors_total{rule=\"payments\"} 4\n")
        .contains("sluice_decision_errors_total{rule=\"backstop\"} 4\n")
        .contains("sluice_decision_errors_total{rule=\"_none\"} 1\n");
  }

  @Test
  void upstreamFailures_loggedAtMostEveryTenSeconds_withTheUnloggedCount() {
    long[] clock = {-Duration.ofHours(1).toNanos()};
    List<String> logged = new ArrayList<>();
    Metrics m = new Metrics((level, message, fields) -> logged.add(level + " " + message + " "
        + java.util.Arrays.toString(fields)), () -> clock[0]);
    m.upstreamFailed(502, "10.0.0.5:3000", "connection refused");
    for (int i = 0; i < 5; i++) {
      clock[0] += Duration.ofSeconds(1).toNanos();
      m.upstreamFailed(504, "10.0.0.5:3000", "no response within 30000 ms");
    }
    clock[0] += Duration.ofSeconds(5).toNanos();
    m.upstreamFailed(502, "10.0.0.5:3000", "connection refused");
    assertThat(logged).containsExactly(
        "WARN upstream failed [status, 502, upstream, 10.0.0.5:3000, cause, connection refused, "
            + "unlogged_before, 0]",
        "WARN upstream failed [status, 502, upstream, 10.0.0.5:3000, cause, connection refused, "
            + "unlogged_before, 5]");
  }
}
