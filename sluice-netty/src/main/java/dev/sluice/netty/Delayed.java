package dev.sluice.netty;

import io.netty.handler.codec.http.HttpRequest;
import java.util.concurrent.ScheduledFuture;

/**
 * A request waiting for its token (a rule's {@code delay}): its slot in the {@link DelayGate},
 * the wait it may still spend, and the timer that re-decides it. Event loop only.
 *
 * <p>The budget is counted from the waits scheduled, not from a clock: a request refused with a
 * retry-after of 100 ms under {@code delay: 500ms} waits 100 ms and has 400 ms left for the next
 * round, should a newcomer take the token first. A timer that fires late only shortens the
 * total by its lateness, so the bound holds without reading time.
 */
final class Delayed {

  private final DelayGate gate;
  private final String key;
  final HttpRequest request;
  private long budgetNanos;
  private boolean released;
  ScheduledFuture<?> timer;

  Delayed(DelayGate gate, String key, HttpRequest request, long budgetNanos) {
    this.gate = gate;
    this.key = key;
    this.request = request;
    this.budgetNanos = budgetNanos;
  }

  /** Spends {@code waitNanos} of the budget; false (nothing spent) when it does not fit. */
  boolean spend(long waitNanos) {
    if (waitNanos > budgetNanos) {
      return false;
    }
    budgetNanos -= waitNanos;
    return true;
  }

  /** Gives the slot back; once. */
  void release() {
    if (!released) {
      released = true;
      gate.release(key);
    }
  }
}
