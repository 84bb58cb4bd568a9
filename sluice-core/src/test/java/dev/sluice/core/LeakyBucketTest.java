package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LeakyBucketTest {

  /** limit_req_zone ... rate=2r/s; limit_req zone=... burst=1. */
  private static final Rule TWO_PER_SECOND =
      Timeline.rule(Limit.leakyBucket("req", 2, Duration.ofSeconds(1), 1));

  @Test
  void newKey_admitsBurstPlusOne_thenRefuses() {
    Timeline t = new Timeline();
    assertThat(t.burst(TWO_PER_SECOND, 3)).containsExactly("A", "A", "R");
  }

  @Test
  void drainsOnAMillisecondClock_withNginxsTruncation() {
    Timeline t = new Timeline();
    t.burst(TWO_PER_SECOND, 2);
    // excess 1000; at 499 ms: 1000 - 2000 * 499 / 1000 + 1000 = 1002 > 1000.
    t.at(0.499);
    Decision refused = t.check(TWO_PER_SECOND);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterNanos()).isEqualTo(1_000_000);
    // 499.999999 ms is still millisecond 499.
    t.atNanos(499_999_999);
    assertThat(t.check(TWO_PER_SECOND).allowed()).isFalse();
    t.assertEvents(TWO_PER_SECOND, "A@0.5", "R@0.5", "R@0.999", "A@1.0");
  }

  @Test
  void truncatedDrain_isLostWhenRequestsAreAcceptedOneMillisecondApart() {
    // 30r/m is 500 thousandths a second: 500 * 1 / 1000 = 0 per millisecond, and nginx moves the
    // key's last time on every accepted request, so the half unit of each millisecond is lost.
    Rule rule = Timeline.rule(Limit.leakyBucket("req", 30, Duration.ofMinutes(1), 3));
    Timeline t = new Timeline();
    // excess 0, 1000, 2000, 3000 at 0..3 ms; the 5th needs 500 * (t - 3) / 1000 >= 1000.
    // A bucket draining continuously from 0 ms would take it at 2000 ms.
    t.assertEvents(rule, "A@0.0", "A@0.001", "A@0.002", "A@0.003", "R@0.004", "R@2.0",
        "R@2.002", "A@2.003");
  }

  @Test
  void rateIsTruncatedToThousandthsPerSecond() {
    // 7r/m: nginx keeps 7000 / 60 = 116 (not 116.67), so the second request waits 8621 ms, not
    // the 8572 ms of 7 per minute.
    Rule rule = Timeline.rule(Limit.leakyBucket("req", 7, Duration.ofMinutes(1), 0));
    Timeline t = new Timeline();
    t.assertEvents(rule, "A@0.0", "R@8.6", "R@8.62", "A@8.621");
  }

  @Test
  void idleKey_drainedToZero_startsAfresh_after60s() {
    // 1r/m = 16 thousandths a second: 60 s drain 960, short of the 1000 that would make the key
    // fresh, but nginx deletes a key idle 60 s whose excess drained to zero.
    Rule rule = Timeline.rule(Limit.leakyBucket("req", 1, Duration.ofMinutes(1), 0));
    Timeline t = new Timeline();
    t.assertEvents(rule, "A@0.0", "R@1.0", "R@59.999", "A@60.0", "R@60.0");
  }

  @Test
  void refusal_consumesNothing_andRemainingCountsWhatFits() {
    Rule rule = Timeline.rule(Limit.leakyBucket("req", 10, Duration.ofSeconds(1), 4));
    Timeline t = new Timeline();
    Decision first = t.check(rule);
    assertThat(first.remaining()).isEqualTo(4);
    assertThat(first.limit()).isEqualTo(5);
    t.burst(rule, 4);
    for (int i = 0; i < 50; i++) {
      assertThat(t.check(rule).allowed()).isFalse();
    }
    t.at(0.1);
    assertThat(t.check(rule).allowed()).isTrue();
  }

  @Test
  void resetIsTheTimeUntilTheKeyIsFresh() {
    Rule rule = Timeline.rule(Limit.leakyBucket("req", 10, Duration.ofSeconds(1), 4));
    Timeline t = new Timeline();
    t.check(rule);
    Decision second = t.check(rule);
    // excess 1000 at 0 ms: fresh when 10000 * ms / 1000 >= 2000, at 200 ms.
    assertThat(second.resetNanos()).isEqualTo(200_000_000L);
    t.atNanos(199_999_999L);
    assertThat(t.limiter.store().isLocal()).isTrue();
    t.at(0.2);
    // Fresh: the next request is free again (excess 0), so five fit at once.
    assertThat(t.burst(rule, 6)).containsExactly("A", "A", "A", "A", "A", "R");
  }

  @Test
  void cost_countsSeveralRequests_butANewKeysFirstIsFree() {
    Rule rule = Timeline.rule(Limit.leakyBucket("req", 10, Duration.ofSeconds(1), 4));
    Timeline t = new Timeline();
    assertThat(t.check(rule, 5).allowed()).isTrue();
    Decision refused = t.check(rule, 1);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterNanos()).isEqualTo(100_000_000L);
  }

  @Test
  void invalidValues_nameTheField() {
    assertThatThrownBy(() -> Limit.leakyBucket("x", 1, Duration.ofMillis(1500), 0))
        .hasMessageContaining("period : PT1.5S (expected: a whole number of seconds");
    assertThatThrownBy(() -> Limit.leakyBucket("x", 1, Duration.ofDays(2), 0))
        .hasMessageContaining("rate : 1 (expected: at least 1 per 1000 s");
    assertThatThrownBy(() -> Limit.leakyBucket("x", 1, Duration.ofSeconds(1), -1))
        .hasMessageContaining("burst : -1");
    assertThat(Limit.leakyBucket("x", 30, Duration.ofMinutes(1), 0).kind().configName())
        .isEqualTo("leaky-bucket");
  }
}
