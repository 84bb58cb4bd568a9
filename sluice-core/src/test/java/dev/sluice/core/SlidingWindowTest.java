package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Seed 001, sections 3-4, with W = 10 s and L = 5. */
class SlidingWindowTest {

  private static final long W = Duration.ofSeconds(10).toNanos();
  private static final Rule FIVE_PER_10S =
      Timeline.rule(Limit.slidingWindow("sw", 5, Duration.ofSeconds(10)));

  @Test
  void seedWorkedNumbers_refusedAtF04_allowedAtF061() {
    // State of bucket 1: c = 3, p = 5 (seed 001, "Retry-after is conservative").
    SlidingWindow sw = new SlidingWindow(5, W);
    long[] s = {1, (5L << 32) | 3};
    Algorithm.Probe probe = new Algorithm.Probe();
    probe.clear();
    assertThat(sw.test(s, 0, W + 4 * W / 10, 1, probe)).as("f = 0.4: 3 + 0.6 * 5 = 6").isFalse();
    assertThat(probe.retryAfterNanos).as("exact: just past f = 0.6, not the seed's 0.6 W")
        .isEqualTo(2 * W / 10 + 1);
    probe.clear();
    assertThat(sw.test(s, 0, W + 6 * W / 10, 1, probe)).as("f = 0.6: estimate 5").isFalse();
    probe.clear();
    assertThat(sw.test(s, 0, W + 6 * W / 10 + 1, 1, probe)).isTrue();
    probe.clear();
    assertThat(sw.test(s, 0, W + 61 * W / 100, 1, probe)).as("f = 0.61: 4.95 < 5").isTrue();
  }

  @Test
  void seedWorkedNumbers_throughTheLimiter() {
    Rule eight = Timeline.rule(Limit.slidingWindow("sw", 8, Duration.ofSeconds(10)));
    Timeline t = new Timeline();
    t.at(5);
    assertThat(t.burst(eight, 5)).containsOnly("A");
    t.atNanos(W);
    assertThat(t.burst(eight, 3)).containsOnly("A");
    // c = 3, p = 5, L = 8: estimate at f = 0.4 is 6, so exactly one more call fits (6 < 8, 7 < 8).
    t.atNanos(W + 4 * W / 10);
    assertThat(t.burst(eight, 3)).containsExactly("A", "A", "R");
  }

  @Test
  void worstCaseBurst_tenHitsWithinAbout08W() {
    Timeline t = new Timeline();
    t.atNanos(W - 1);
    assertThat(t.burst(FIVE_PER_10S, 5)).containsOnly("A");
    int accepted = 5;
    // Hit k of the new bucket is allowed once f > (k - 1) / L.
    for (int k = 1; k <= 5; k++) {
      long f = W + (k - 1) * W / 5;
      t.atNanos(f);
      if (k > 1) {
        assertThat(t.check(FIVE_PER_10S).allowed()).as("hit %d at f = %d/5", k, k - 1).isFalse();
      }
      t.atNanos(f + 1);
      assertThat(t.check(FIVE_PER_10S).allowed()).as("hit %d just after", k).isTrue();
      accepted++;
    }
    assertThat(accepted).isEqualTo(10);
    // All ten landed between W - 1 ns and W + 0.8 W + 1 ns.
  }

  @Test
  void refusedCalls_areNotCounted() {
    Timeline t = new Timeline();
    t.burst(FIVE_PER_10S, 5);
    t.burst(FIVE_PER_10S, 50);
    // Previous = 5 (not 55): at f = 0.2 + 1 ns the estimate is just under 4, so two calls fit.
    t.atNanos(W + 2 * W / 10 + 1);
    assertThat(t.burst(FIVE_PER_10S, 3)).containsExactly("A", "A", "R");
  }

  @Test
  void twoIdleWindows_resetThePreviousCount() {
    Timeline t = new Timeline();
    t.burst(FIVE_PER_10S, 5);
    t.atNanos(2 * W);
    assertThat(t.burst(FIVE_PER_10S, 6)).containsExactly("A", "A", "A", "A", "A", "R");
  }

  @Test
  void retryAfter_isExactEarliestInstant() {
    Timeline t = new Timeline();
    t.at(5);
    t.burst(FIVE_PER_10S, 5);
    Decision refused = t.check(FIVE_PER_10S);
    // Current bucket full (c = 5): next bucket, estimate 5 * (1 - f) < 5 just after f = 0.
    assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(5).toNanos() + 1);
    t.atNanos(5_000_000_000L + refused.retryAfterNanos() - 1);
    assertThat(t.check(FIVE_PER_10S).allowed()).isFalse();
    t.atNanos(5_000_000_000L + refused.retryAfterNanos());
    assertThat(t.check(FIVE_PER_10S).allowed()).isTrue();
  }
}
