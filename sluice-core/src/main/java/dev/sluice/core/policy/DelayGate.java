package dev.sluice.core.policy;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the requests that wait for their token (a rule's {@code delay}): at most a rule's
 * {@code delayQueue} per key, and at most {@code maxWaiting} in all; past either a request is
 * refused at once. Shared by the channels of one server; thread-safe.
 *
 * <p>A key's counter exists only while a request of that key waits (it is removed at zero), so a
 * flood of distinct keys holds at most {@code maxWaiting} counters.
 */
public final class DelayGate {

  /** The default bound on all waiting requests of a server. */
  public static final int DEFAULT_MAX_WAITING = 10_000;

  private final int maxWaiting;
  private final AtomicInteger total = new AtomicInteger();
  private final ConcurrentHashMap<String, Integer> perKey = new ConcurrentHashMap<>();

  private DelayGate(int maxWaiting) {
    this.maxWaiting = maxWaiting;
  }

  /** A gate letting at most {@code maxWaiting} requests wait at once. */
  public static DelayGate create(int maxWaiting) {
    if (maxWaiting < 1) {
      throw new IllegalArgumentException("maxWaiting : " + maxWaiting + " (expected: > 0)");
    }
    return new DelayGate(maxWaiting);
  }

  /** Takes a waiting slot for {@code key}; false when {@code key} or the server is full. */
  boolean tryAcquire(String key, int perKeyCap) {
    if (total.incrementAndGet() > maxWaiting) {
      total.decrementAndGet();
      return false;
    }
    boolean[] taken = new boolean[1];
    perKey.compute(key, (k, n) -> {
      int count = n == null ? 0 : n;
      if (count >= perKeyCap) {
        return n;
      }
      taken[0] = true;
      return count + 1;
    });
    if (!taken[0]) {
      total.decrementAndGet();
    }
    return taken[0];
  }

  /** Gives back a slot taken by {@link #tryAcquire}. */
  void release(String key) {
    perKey.computeIfPresent(key, (k, n) -> n <= 1 ? null : n - 1);
    total.decrementAndGet();
  }

  /** Requests waiting now, for all keys. */
  public int waiting() {
    return total.get();
  }

  /** Keys with a request waiting now. */
  public int keys() {
    return perKey.size();
  }

  public int maxWaiting() {
    return maxWaiting;
  }
}
