package dev.sluice.core;

/**
 * Sliding-window counter (seed 001, sections 3-4): two fixed buckets, blended.
 *
 * <p>For window {@code W}, bucket start {@code s}, current count {@code c} and previous count
 * {@code p}, the estimate at {@code t} is {@code c + clamp(1 - (t - s) / W) * p}. A call of
 * {@code cost} is allowed when {@code floor(estimate) + cost <= L}; for cost 1 that is exactly the
 * seed's {@code estimate < L}. Refused calls are not counted. After two idle windows the previous
 * count is zero. Everything is integer arithmetic, so boundaries are exact.
 *
 * <p>Worked numbers (seed 001): {@code L = 5, c = 3, p = 5}. At {@code f = 0.4} into the bucket the
 * estimate is {@code 3 + 0.6 * 5 = 6}: refused. At {@code f = 0.61} it is {@code 4.95}: allowed.
 * The earliest allowed instant is one nanosecond past {@code f = 0.6}, so retry-after at
 * {@code f = 0.4} is {@code 0.2 W + 1 ns}. The seed answers {@code 0.6 W} (time to the bucket's
 * end), an upper bound; we return the exact earliest time, which may lie in the next bucket or,
 * when the current bucket alone is full, in the one after.
 *
 * <p>Known weakness, kept for constant memory: with {@code L} hits at the very end of one bucket,
 * hit {@code k} of the next is allowed once {@code f > (k - 1) / L}, so about {@code 2 L} calls fit
 * in {@code 0.8 W}. Use {@link Limit#slidingLog} where exact counting matters.
 *
 * <p>State: the bucket index, then both counts packed into one long (previous high, current low).
 */
final class SlidingWindow extends Algorithm {

  private final long limit;
  private final long window;

  SlidingWindow(long limit, long window) {
    this.limit = limit;
    this.window = window;
  }

  @Override
  int stateSize() {
    return 2;
  }

  @Override
  void init(long[] s, int off, long now) {
    s[off] = Math.floorDiv(now, window) - 2;
    s[off + 1] = 0;
  }

  /** Returns {prev << 32 | cur} rolled forward to bucket {@code index}. */
  private static long rolled(long[] s, int off, long index) {
    long stored = s[off];
    if (stored >= index) {
      return s[off + 1];
    }
    if (stored == index - 1) {
      return (s[off + 1] & 0xFFFF_FFFFL) << 32;
    }
    return 0;
  }

  private long index(long[] s, int off, long now) {
    return Math.max(Math.floorDiv(now, window), s[off]);
  }

  @Override
  boolean test(long[] s, int off, long now, long cost, Probe probe) {
    long index = index(s, off, now);
    long elapsed = Math.min(Math.max(now - index * window, 0), window - 1);
    long counts = rolled(s, off, index);
    long prev = counts >>> 32;
    long cur = counts & 0xFFFF_FFFFL;
    long weighted = Arith.mulDivFloor(window - elapsed, prev, window);
    long toBucketEnd = window - elapsed;
    if (cur + cost + weighted <= limit) {
      probe.remaining = limit - cur - cost - weighted;
      probe.resetNanos = toBucketEnd + window;
      return true;
    }
    probe.remaining = Math.max(0, limit - cur - weighted);
    probe.resetNanos = cur > 0 ? toBucketEnd + window : toBucketEnd;
    probe.retryAfterNanos = retryAfter(elapsed, prev, cur, cost);
    return false;
  }

  /** Earliest offset from now at which the same call is allowed, given it is refused now. */
  private long retryAfter(long elapsed, long prev, long cur, long cost) {
    long slack = limit - cost - cur;
    if (slack >= 0 && prev > 0) {
      long at = firstAllowedOffset(slack, prev);
      if (at < window) {
        return at - elapsed;
      }
    }
    long toBucketEnd = window - elapsed;
    if (cur == 0) {
      return toBucketEnd;
    }
    long next = firstAllowedOffset(limit - cost, cur);
    if (next <= 0) {
      return toBucketEnd;
    }
    return next < window ? toBucketEnd + next : toBucketEnd + window;
  }

  /**
   * Smallest offset {@code e} into a bucket with {@code floor((W - e) * prev / W) <= slack}, i.e.
   * {@code e > W - (slack + 1) W / prev}.
   */
  private long firstAllowedOffset(long slack, long prev) {
    return window - Arith.mulDivCeil(slack + 1, window, prev) + 1;
  }

  @Override
  void commit(long[] s, int off, long now, long cost) {
    long index = index(s, off, now);
    long counts = rolled(s, off, index);
    s[off] = index;
    s[off + 1] = counts + cost;
  }

  @Override
  boolean isFresh(long[] s, int off, long now) {
    return rolled(s, off, index(s, off, now)) == 0;
  }
}
