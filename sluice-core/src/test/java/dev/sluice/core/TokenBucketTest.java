package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collections;
import org.junit.jupiter.api.Test;

class TokenBucketTest {

  private static final Rule ANALYSIS =
      Timeline.rule(Limit.tokenBucket("analysis", 15, 30, Duration.ofMinutes(1)));

  @Test
  void seed000_analysisBucket_refusesFromThe16thRequest() {
    Timeline t = new Timeline();
    assertThat(t.burst(ANALYSIS, 15)).containsOnly("A");
    Decision sixteenth = t.check(ANALYSIS);
    assertThat(sixteenth.allowed()).isFalse();
    assertThat(sixteenth.retryAfterNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
    assertThat(sixteenth.retryAfterSeconds()).isEqualTo(2);
    assertThat(sixteenth.remaining()).isZero();
    assertThat(sixteenth.limit()).isEqualTo(15);
    assertThat(sixteenth.rule()).isEqualTo("r");
    assertThat(sixteenth.limitName()).isEqualTo("analysis");
  }

  @Test
  void refill_isContinuous_oneTokenPerInterval() {
    Timeline t = new Timeline();
    t.burst(ANALYSIS, 15);
    t.assertEvents(ANALYSIS, "R@1.999999999", "A@2.0", "R@2.0", "R@3.9", "A@4.0", "A@8.0",
        "A@8.0", "R@8.0");
  }

  @Test
  void allowedDecision_reportsRemainingAndReset() {
    Timeline t = new Timeline();
    Decision first = t.check(ANALYSIS);
    assertThat(first.allowed()).isTrue();
    assertThat(first.remaining()).isEqualTo(14);
    assertThat(first.resetNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
    assertThat(first.windowNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
  }

  @Test
  void cost_spendsSeveralTokens_andRetryAfterIsExact() {
    Timeline t = new Timeline();
    assertThat(t.check(ANALYSIS, 10).allowed()).isTrue();
    Decision refused = t.check(ANALYSIS, 10);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
    assertThat(refused.remaining()).isEqualTo(5);
    t.atNanos(Duration.ofSeconds(10).toNanos() - 1);
    assertThat(t.check(ANALYSIS, 10).allowed()).isFalse();
    t.at(10);
    assertThat(t.check(ANALYSIS, 10).allowed()).isTrue();
  }

  @Test
  void refusedRequest_consumesNothing() {
    Timeline t = new Timeline();
    t.burst(ANALYSIS, 15);
    t.burst(ANALYSIS, 100);
    t.at(2);
    assertThat(t.check(ANALYSIS).allowed()).isTrue();
  }

  @Test
  void tickerNearLongMaxValue_wrapsWithoutExtraAllowance() {
    Timeline t = new Timeline(Long.MAX_VALUE - Duration.ofSeconds(1).toNanos(), 100);
    assertThat(t.burst(ANALYSIS, 16)).containsSubsequence(Collections.nCopies(15, "A"))
        .endsWith("R");
    t.at(2);
    assertThat(t.burst(ANALYSIS, 2)).containsExactly("A", "R");
  }

  @Test
  void tickerBelowZero_behavesTheSame() {
    Timeline t = new Timeline(-Duration.ofDays(1).toNanos(), 100);
    assertThat(t.burst(ANALYSIS, 16)).endsWith("R").containsOnlyOnce("R");
    t.at(2);
    assertThat(t.burst(ANALYSIS, 2)).containsExactly("A", "R");
  }

  @Test
  void jumpOfTenYears_refillsToBurstOnly() {
    Timeline t = new Timeline();
    t.burst(ANALYSIS, 15);
    t.at(Duration.ofDays(3653).toSeconds());
    assertThat(t.burst(ANALYSIS, 16)).containsOnlyOnce("R").endsWith("R");
  }

  @Test
  void timeGoingBackwards_neverRefills() {
    Timeline t = new Timeline();
    t.at(100);
    t.burst(ANALYSIS, 15);
    t.at(50);
    assertThat(t.check(ANALYSIS).allowed()).isFalse();
    t.at(101);
    assertThat(t.check(ANALYSIS).allowed()).isFalse();
    t.at(102);
    assertThat(t.check(ANALYSIS).allowed()).isTrue();
  }

  @Test
  void badArguments_nameTheFieldAndTheExpectation() {
    assertThatThrownBy(() -> Limit.tokenBucket("x", -5, 1, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("burst : -5 (expected: > 0)");
    assertThatThrownBy(() -> Limit.tokenBucket("x", 5, 0, Duration.ofSeconds(1)))
        .hasMessage("refill : 0 (expected: > 0)");
    assertThatThrownBy(() -> Limit.tokenBucket("x", 5, 1, Duration.ZERO))
        .hasMessage("period : PT0S (expected: >= 1ms)");
    assertThatThrownBy(() -> Limit.tokenBucket("x", Long.MAX_VALUE, 1, Duration.ofSeconds(1)))
        .hasMessageStartingWith("burst : 9223372036854775807 (expected: <= ");
    Timeline t = new Timeline();
    assertThatThrownBy(() -> t.check(ANALYSIS, 0)).hasMessage("cost : 0 (expected: > 0)");
    assertThatThrownBy(() -> t.check(ANALYSIS, -1)).hasMessage("cost : -1 (expected: > 0)");
    assertThatThrownBy(() -> t.check(ANALYSIS, 16)).hasMessage(
        "cost : 16 (expected: <= 15, the capacity of limit 'analysis' in rule 'r')");
  }

  /** Regression (issue 7): a 1-per-1ns window let 30 of 30 requests through. */
  @Test
  void subMillisecondDurations_areRejected() {
    assertThatThrownBy(() -> Limit.fixedWindow("w", 1, Duration.ofNanos(1)))
        .hasMessage("window : PT0.000000001S (expected: >= 1ms)");
    assertThatThrownBy(() -> Limit.tokenBucket("b", 1, 1, Duration.ofNanos(500_000)))
        .hasMessage("period : PT0.0005S (expected: >= 1ms)");
    assertThatThrownBy(() -> Limit.slidingWindow("s", 1, Duration.ofSeconds(-1)))
        .hasMessage("window : PT-1S (expected: >= 1ms)");
    assertThat(Limit.fixedWindow("w", 1, Duration.ofMillis(1)).windowNanos()).isEqualTo(1_000_000);
  }

  @Test
  void invalidValues_carryFieldValueAndExpectation() {
    assertThatThrownBy(() -> Limit.tokenBucket("x", -5, 1, Duration.ofSeconds(1)))
        .isInstanceOfSatisfying(InvalidValueException.class, e -> {
          assertThat(e.field()).isEqualTo("burst");
          assertThat(e.value()).isEqualTo("-5");
          assertThat(e.expected()).isEqualTo("> 0");
        });
  }
}
