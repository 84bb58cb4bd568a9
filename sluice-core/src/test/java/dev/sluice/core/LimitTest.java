package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a limit keeps as given, beside the steps its algorithm runs on. */
class LimitTest {

  @Test
  void tokenBucket_keepsItsRefillAndPeriodAsGiven_besideTheRoundedStep() {
    // 7 per minute: one token per 8.571428572 s, rounded up; a file still says 7 per 1m
    Limit l = Limit.tokenBucket("api", 15, 7, Duration.ofMinutes(1));
    assertThat(l.refill()).isEqualTo(7);
    assertThat(l.period()).isEqualTo(Duration.ofMinutes(1));
    assertThat(l.periodNanos()).isEqualTo(8_571_428_572L);
    assertThat(l.capacity()).isEqualTo(15);
  }

  @Test
  void windowsAndScores_keepTheirWindowOrDecay() {
    assertThat(Limit.fixedWindow("w", 5, Duration.ofSeconds(10)).period())
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(Limit.slidingWindow("w", 5, Duration.ofSeconds(3)).period())
        .isEqualTo(Duration.ofSeconds(3));
    assertThat(Limit.slidingLog("w", 5, Duration.ofMillis(1500)).period())
        .isEqualTo(Duration.ofMillis(1500));
    Limit score = Limit.score("s", 10, 0.5, Duration.ofSeconds(2));
    assertThat(score.period()).isEqualTo(Duration.ofSeconds(2));
    assertThat(score.refill()).isZero();
  }
}
