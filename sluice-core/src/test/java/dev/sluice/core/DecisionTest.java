package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DecisionTest {

  private final FakeTicker ticker = new FakeTicker();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1_000));
  private final Rule rule = Rule.builder("login")
      .limit(Limit.tokenBucket("burst", 1, 1, Duration.ofMinutes(1))).ban(Duration.ofMinutes(5))
      .build();
  private final Identity who = Identity.ip("203.0.113.7");

  /** Issue 13: a banned decision printed "limit=null/-1"; no limit decided it. */
  @Test
  void toString_ofABannedDecision_namesTheBanNotALimit() {
    assertThat(limiter.check(rule, who).toString()).startsWith("Allowed{rule=login, limit=burst/1,");
    Decision banning = limiter.check(rule, who);
    assertThat(banning.banApplied()).isTrue();
    assertThat(banning.toString()).contains("limit=burst/1").contains("ban applied");

    Decision banned = limiter.check(rule, who);
    assertThat(banned.banned()).isTrue();
    assertThat(banned.toString()).startsWith("Refused{rule=login, banned,")
        .doesNotContain("null").doesNotContain("limit=");
  }
}
