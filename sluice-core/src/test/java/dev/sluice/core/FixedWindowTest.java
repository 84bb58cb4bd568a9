package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class FixedWindowTest {

  private static final Rule TWO_PER_10S =
      Timeline.rule(Limit.fixedWindow("w", 2, Duration.ofSeconds(10)));

  @Test
  void limitPerAlignedWindow_retryAfterIsTimeToWindowEnd() {
    Timeline t = new Timeline();
    t.at(3);
    assertThat(t.burst(TWO_PER_10S, 3)).containsExactly("A", "A", "R");
    Decision refused = t.check(TWO_PER_10S);
    assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
    assertThat(refused.resetNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
    t.assertEvents(TWO_PER_10S, "R@9.999", "A@10.0", "A@19.0", "R@19.5", "A@20.0");
  }

  @Test
  void boundaryBurst_isTheKnownCost() {
    Timeline t = new Timeline();
    t.assertEvents(TWO_PER_10S, "A@9.9", "A@9.9", "A@10.0", "A@10.0", "R@10.1");
  }

  @Test
  void seed004_600PerMinute_601stIsRefused() {
    Rule global = Timeline.rule(Limit.fixedWindow("global", 600, Duration.ofMinutes(1)));
    Timeline t = new Timeline();
    t.at(45);
    assertThat(t.burst(global, 601)).containsOnlyOnce("R").endsWith("R");
    assertThat(t.check(global).retryAfterSeconds()).isEqualTo(15);
  }

  @Test
  void timeGoingBackwards_keepsTheNewerWindowsCount() {
    Timeline t = new Timeline();
    t.at(15);
    t.burst(TWO_PER_10S, 2);
    t.at(5);
    assertThat(t.check(TWO_PER_10S).allowed()).isFalse();
  }
}
