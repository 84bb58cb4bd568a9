package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Seed 003's score: chat:send is 1 per action, max 10, decays 1 per 2 s. */
class DecayingScoreTest {

  private static final Rule SEND = Timeline.rule(Limit.score("score", 10, 1, Duration.ofSeconds(2)));

  @Test
  void eleventhAction_isRefused_retryAfterIsTimeForOnePoint() {
    Timeline t = new Timeline();
    assertThat(t.burst(SEND, 10)).containsOnly("A");
    Decision refused = t.check(SEND);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.currentScore()).isEqualTo(10.0);
    assertThat(refused.maxScore()).isEqualTo(10.0);
    assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
    // The seed's currentScore * scoreDecayMs = 20 s is the time to zero: our reset.
    assertThat(refused.resetNanos()).isEqualTo(Duration.ofSeconds(20).toNanos());
    t.assertEvents(SEND, "R@1.999", "A@2.0", "R@2.0", "A@5.0", "R@5.0");
  }

  @Test
  void decayIsContinuous_andFloorsAtZero() {
    Timeline t = new Timeline();
    t.burst(SEND, 10);
    t.at(1);
    // 10 - 0.5 = 9.5: one action fits (10.5 would not).
    assertThat(t.burst(SEND, 2)).containsExactly("R", "R");
    t.at(2);
    assertThat(t.burst(SEND, 2)).containsExactly("A", "R");
    t.at(1000);
    assertThat(t.burst(SEND, 11)).containsOnlyOnce("R").endsWith("R");
  }

  @Test
  void fractionalCosts_areExact_typingAllowsThirty() {
    Rule typing = Timeline.rule(Limit.score("score", 6, 0.2, Duration.ofMillis(1500)));
    Timeline t = new Timeline();
    assertThat(t.burst(typing, 31)).containsOnlyOnce("R").endsWith("R");
  }

  @Test
  void allowedDecision_hidesScore_refusedShowsIt() {
    Timeline t = new Timeline();
    Decision allowed = t.check(SEND);
    assertThat(allowed.currentScore()).isNaN();
    assertThat(allowed.remaining()).isEqualTo(9);
  }

  @Test
  void badArguments() {
    assertThatThrownBy(() -> Limit.score("s", 0, 1, Duration.ofSeconds(1)))
        .hasMessage("maxScore : 0.0 (expected: a finite number > 0)");
    assertThatThrownBy(() -> Limit.score("s", 5, 6, Duration.ofSeconds(1)))
        .hasMessage("perAction : 6.0 (expected: between 0.000001 and maxScore 5.0)");
    assertThatThrownBy(() -> Limit.score("s", 5, Double.NaN, Duration.ofSeconds(1)))
        .hasMessage("perAction : NaN (expected: a finite number > 0)");
  }
}
