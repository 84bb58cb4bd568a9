package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A store that cannot answer: each rule's OnStoreError decides, and nothing throws. */
class DegradedTest {

  private final RateLimiter limiter = RateLimiter.of(new FailingStore());
  private final Identity who = Identity.ip("192.0.2.1");

  private static Rule rule(String name, OnStoreError onError) {
    return Rule.builder(name).limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(1)))
        .onStoreError(onError).build();
  }

  @Test
  void allowByDefault_markedDegraded() {
    Decision d = limiter.check(rule("api", OnStoreError.ALLOW), who);
    assertThat(d.allowed()).isTrue();
    assertThat(d.degraded()).isTrue();
  }

  @Test
  void denyForHighRiskRoutes_markedDegraded_withARetryAfter() {
    Decision d = limiter.check(List.of(rule("api", OnStoreError.ALLOW),
        rule("game-results", OnStoreError.DENY)), who, 1);
    assertThat(d.allowed()).isFalse();
    assertThat(d.degraded()).isTrue();
    assertThat(d.rule()).isEqualTo("game-results");
    assertThat(d.retryAfterSeconds()).isEqualTo(1);
  }

  @Test
  void shadowDenyRule_doesNotDeny() {
    Rule shadow = rule("s", OnStoreError.DENY).toBuilder().mode(Mode.SHADOW).build();
    assertThat(limiter.check(shadow, who).allowed()).isTrue();
  }

  @Test
  void fallbackVerdicts_markTheDecisionDegraded() {
    Store memory = Store.memory(new FakeTicker(), 100);
    Store fallingBack = new FailingStore() {
      @Override
      public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
        memory.evaluate(rules, identity, cost, out);
        out.markDegraded();
      }
    };
    RateLimiter local = RateLimiter.of(fallingBack);
    Rule one = rule("one", OnStoreError.ALLOW);
    Decision first = local.check(one, who);
    Decision second = local.check(one, who);
    assertThat(first.allowed()).isTrue();
    assertThat(first.degraded()).isTrue();
    assertThat(second.allowed()).as("the fallback still limits").isFalse();
    assertThat(second.degraded()).isTrue();
  }

  @Test
  void leases_followOnStoreError() {
    ConcurrencyLimit open = ConcurrencyLimit.of("ws", "ip", 1, Duration.ofMinutes(1),
        OnStoreError.ALLOW);
    ConcurrencyLimit closed = ConcurrencyLimit.of("ws", "ip", 1, Duration.ofMinutes(1),
        OnStoreError.DENY);
    Lease lease = limiter.acquire(open, who).orElseThrow();
    assertThat(lease.degraded()).isTrue();
    lease.close();
    assertThat(limiter.acquire(closed, who)).isEmpty();
  }
}
