package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {

  private final AtomicLong now = new AtomicLong(Long.MAX_VALUE - 500);
  private final CircuitBreaker breaker = new CircuitBreaker(3, 1000, now::get);

  @Test
  void opensAfterConsecutiveFailures_only() {
    breaker.onFailure();
    breaker.onFailure();
    breaker.onSuccess();
    breaker.onFailure();
    breaker.onFailure();
    assertThat(breaker.allow()).isTrue();
    assertThat(breaker.onFailure()).isTrue();
    assertThat(breaker.allow()).isFalse();
  }

  @Test
  void halfOpen_letsOneProbeThrough_successCloses() {
    open();
    now.addAndGet(999);
    assertThat(breaker.allow()).isFalse();
    now.addAndGet(1);
    assertThat(breaker.allow()).isTrue();
    assertThat(breaker.allow()).as("second caller while probing").isFalse();
    breaker.onSuccess();
    assertThat(breaker.isOpen()).isFalse();
    assertThat(breaker.allow()).isTrue();
  }

  @Test
  void halfOpen_probeFailure_opensAgain() {
    open();
    now.addAndGet(1000);
    assertThat(breaker.allow()).isTrue();
    breaker.onFailure();
    assertThat(breaker.allow()).isFalse();
    now.addAndGet(1000);
    assertThat(breaker.allow()).isTrue();
  }

  private void open() {
    for (int i = 0; i < 3; i++) {
      breaker.onFailure();
    }
    assertThat(breaker.isOpen()).isTrue();
  }
}
