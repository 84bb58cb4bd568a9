package dev.sluice.redis;

import dev.sluice.core.Ticker;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stops calling a store that keeps failing. After {@code threshold} consecutive failures the
 * circuit opens for {@code openNanos}: calls fail at once. Then one call at a time goes through
 * as a probe; its success closes the circuit, its failure opens it again. With the defaults (5
 * failures, 1 s open), calls resume at most about 1 s plus one reconnect after Redis answers again.
 */
final class CircuitBreaker {

  private final int threshold;
  private final long openNanos;
  private final Ticker ticker;
  private final AtomicInteger failures = new AtomicInteger();
  private final AtomicBoolean probing = new AtomicBoolean();
  private volatile boolean open;
  private volatile long openUntil;

  CircuitBreaker(int threshold, long openNanos, Ticker ticker) {
    this.threshold = threshold;
    this.openNanos = openNanos;
    this.ticker = ticker;
  }

  /** True if a call may go to the store now (when half-open, only the single probe). */
  boolean allow() {
    if (!open) {
      return true;
    }
    if (ticker.read() - openUntil < 0) {
      return false;
    }
    return probing.compareAndSet(false, true);
  }

  void onSuccess() {
    if (open || failures.get() != 0) {
      failures.set(0);
      open = false;
      probing.set(false);
    }
  }

  /** Returns true when this failure opened a closed circuit. */
  boolean onFailure() {
    if (open) {
      openUntil = ticker.read() + openNanos;
      probing.set(false);
      return false;
    }
    if (failures.incrementAndGet() >= threshold) {
      openUntil = ticker.read() + openNanos;
      open = true;
      probing.set(false);
      return true;
    }
    return false;
  }

  boolean isOpen() {
    return open;
  }
}
