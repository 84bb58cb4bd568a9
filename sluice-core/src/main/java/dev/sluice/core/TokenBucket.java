package dev.sluice.core;

/**
 * Token bucket as one long: the time at which the bucket will be full again (GCRA's
 * "theoretical arrival time").
 *
 * <p>With {@code burst} tokens refilled at {@code rate} per {@code period}, one token takes
 * {@code T = period / rate} to come back. A bucket holding {@code k} tokens is one whose full time
 * lies {@code (burst - k) * T} ahead. Spending {@code cost} pushes the full time {@code cost * T}
 * further; the call fits while the full time stays within {@code burst * T} of now.
 *
 * <p>Worked numbers, seed 000's analysis bucket (burst 15, 30 per minute, T = 2 s): fifteen calls
 * at t=0 push the full time to 30 s. The sixteenth would push it to 32 s, 2 s past the 30 s
 * allowed, so it is refused with retry-after exactly 2 s. At t=2 s one token is back.
 *
 * <p>T is rounded up to whole nanoseconds when the period does not divide evenly, so the bucket
 * never admits more than {@code burst + rate * elapsed}. A full bucket is any full time at or
 * before now: fresh state, dropped by the store. Time going backwards only makes the bucket look
 * emptier, never fuller.
 */
final class TokenBucket extends Algorithm {

  private final long burst;
  private final long interval;
  private final long capacityNanos;
  private final Divider perToken;

  TokenBucket(long burst, long interval) {
    this.burst = burst;
    this.interval = interval;
    this.capacityNanos = Math.multiplyExact(burst, interval);
    this.perToken = new Divider(interval);
  }

  @Override
  int stateSize() {
    return 1;
  }

  @Override
  void init(long[] s, int off, long now) {
    s[off] = now;
  }

  @Override
  boolean test(long[] s, int off, long now, long cost, Probe probe) {
    long base = Math.max(s[off], now);
    long next = base + cost * interval;
    long ahead = next - now;
    if (ahead <= capacityNanos) {
      probe.remaining = perToken.divide(capacityNanos - ahead);
      probe.resetNanos = ahead;
      return true;
    }
    long backlog = base - now;
    probe.remaining = capacityNanos > backlog ? perToken.divide(capacityNanos - backlog) : 0;
    probe.resetNanos = backlog;
    probe.retryAfterNanos = ahead - capacityNanos;
    return false;
  }

  @Override
  void commit(long[] s, int off, long now, long cost) {
    s[off] = Math.max(s[off], now) + cost * interval;
  }

  @Override
  boolean isFresh(long[] s, int off, long now) {
    return s[off] <= now;
  }

  long burst() {
    return burst;
  }
}
