package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Seed 001, "Game results": 12 per session per rolling 60 s. */
class SlidingLogTest {

  private static final Rule TWELVE_PER_MINUTE =
      Timeline.rule(Limit.slidingLog("results", 12, Duration.ofSeconds(60)));

  @Test
  void exactCount_retryAfterIsWhenTheOldestLeaves() {
    Timeline t = new Timeline();
    for (int i = 0; i < 12; i++) {
      t.at(i);
      assertThat(t.check(TWELVE_PER_MINUTE).allowed()).isTrue();
    }
    t.at(30);
    Decision refused = t.check(TWELVE_PER_MINUTE);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
    t.assertEvents(TWELVE_PER_MINUTE, "R@59.999", "A@60.0", "R@60.5", "A@61.0", "A@62.0");
  }

  @Test
  void noBoundaryBurst() {
    Timeline t = new Timeline();
    t.at(59);
    t.burst(TWELVE_PER_MINUTE, 12);
    t.at(61);
    assertThat(t.check(TWELVE_PER_MINUTE).allowed()).isFalse();
    t.at(119);
    assertThat(t.burst(TWELVE_PER_MINUTE, 13)).containsOnlyOnce("R");
  }

  @Test
  void cost_recordsSeveralHits() {
    Timeline t = new Timeline();
    assertThat(t.check(TWELVE_PER_MINUTE, 10).allowed()).isTrue();
    t.at(1);
    assertThat(t.check(TWELVE_PER_MINUTE, 2).allowed()).isTrue();
    t.at(2);
    Decision refused = t.check(TWELVE_PER_MINUTE, 3);
    assertThat(refused.allowed()).isFalse();
    // Three must leave: the ten from t = 0 leave together at 60 s.
    assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(58).toNanos());
  }

  @Test
  void hugeLimit_isRejectedWithAHint() {
    assertThatThrownBy(() -> Limit.slidingLog("x", 1_000_000, Duration.ofSeconds(1)))
        .hasMessageStartingWith("limit : 1000000 (expected: <= 100000 for a sliding log");
  }
}
