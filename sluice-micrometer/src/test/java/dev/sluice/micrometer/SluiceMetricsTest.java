package dev.sluice.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the meters count, from real decisions of core's limiter on the in-memory store. */
class SluiceMetricsTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final SluiceMetrics metrics = new SluiceMetrics(registry);
  private final RateLimiter limiter = RateLimiter.of(Store.memory(() -> 0L, 1000));

  private static Rule window(String name, long limit) {
    return Rule.builder(name).limit(Limit.fixedWindow("w", limit, Duration.ofMinutes(1))).build();
  }

  private Decision decide(List<Rule> rules, String ip) {
    Decision d = limiter.check(rules, Identity.ip(ip), 1);
    metrics.decision(DecisionListener.HTTP, rules, d, TimeUnit.MICROSECONDS.toNanos(300));
    return d;
  }

  @Test
  void everyEvaluatedRuleIsCounted_theRefusingOneAsRefused() {
    Rule backstop = window("backstop", 100);
    Rule api = window("api", 1);
    List<Rule> rules = List.of(backstop, api);
    decide(rules, "192.0.2.1");
    assertThat(decide(rules, "192.0.2.1").allowed()).isFalse();
    assertThat(metrics.decisions("backstop", "allowed")).isEqualTo(2);
    assertThat(metrics.decisions("api", "allowed")).isEqualTo(1);
    assertThat(metrics.decisions("api", "refused")).isEqualTo(1);
    assertThat(registry.get("sluice.decision.latency").timer().count()).isEqualTo(2);
    assertThat(registry.get("sluice.decision.latency").timer().totalTime(TimeUnit.MICROSECONDS))
        .isEqualTo(600);
  }

  @Test
  void shadowRule_refusesNothing_butCountsItsWouldBeRefusal() {
    Rule beta = window("beta", 1).toBuilder().mode(Mode.SHADOW).build();
    decide(List.of(beta), "192.0.2.2");
    assertThat(decide(List.of(beta), "192.0.2.2").allowed()).isTrue();
    assertThat(metrics.decisions("beta", "shadow_refused")).isEqualTo(1);
    assertThat(metrics.shadowRefusals("beta")).isEqualTo(1);
  }

  @Test
  void aBan_isCountedOnce_whenApplied() {
    Rule login = window("login", 1).toBuilder().ban(Duration.ofMinutes(5)).build();
    for (int i = 0; i < 4; i++) {
      decide(List.of(login), "192.0.2.3");
    }
    assertThat(registry.get("sluice.bans").tag("rule", "login").counter().count()).isEqualTo(1);
  }

  @Test
  void pastMaxRules_furtherRulesShareOneOtherSeries() {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < SluiceMetrics.MAX_RULES; i++) {
      names.add("r" + i);
    }
    metrics.registerRules(names);
    decide(List.of(window("late", 10)), "192.0.2.4");
    assertThat(metrics.decisions(SluiceMetrics.OTHER, "allowed")).isEqualTo(1);
    assertThat(registry.find("sluice.decisions").tag("rule", "late").counters()).isEmpty();
    assertThat(registry.find("sluice.decisions").counters())
        .hasSize((SluiceMetrics.MAX_RULES + 1) * 4);
  }

  @Test
  void generatedResponses_byStatus() {
    metrics.generated(429);
    metrics.generated(429);
    metrics.generated(503);
    assertThat(registry.get("sluice.generated.responses").tag("status", "429").counter().count())
        .isEqualTo(2);
    assertThat(registry.get("sluice.generated.responses").tag("status", "503").counter().count())
        .isEqualTo(1);
  }
}
