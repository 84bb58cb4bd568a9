package dev.sluice.core;

/**
 * Exact sliding log (seed 001, "Game results"): the timestamps of accepted hits in the last
 * {@code W}, at most {@code L} of them, in a ring.
 *
 * <p>A call of cost {@code k} is allowed when {@code |{h : t - h < W}| + k <= L}; it then records
 * {@code k} timestamps. Retry-after is when enough of the oldest fall out: for cost 1, the oldest
 * hit's time plus {@code W}. Seed 001 answers a flat 60 s; this is exact. Worked numbers: 12 per
 * 60 s, hits at 0 s..11 s; the 13th at 30 s is refused with retry-after 30 s, when the hit from
 * 0 s leaves the window.
 *
 * <p>State: {@code [count, head, ts_0 .. ts_(L-1)]}, so memory is bounded by the limit.
 */
final class SlidingLog extends Algorithm {

  private final int limit;
  private final long window;

  SlidingLog(int limit, long window) {
    this.limit = limit;
    this.window = window;
  }

  @Override
  int stateSize() {
    return 2 + limit;
  }

  @Override
  void init(long[] s, int off, long now) {
    s[off] = 0;
    s[off + 1] = 0;
  }

  private long at(long[] s, int off, int i) {
    return s[off + 2 + (int) ((s[off + 1] + i) % limit)];
  }

  /** Number of leading (oldest) entries that have left the window. */
  private int expired(long[] s, int off, long now) {
    int count = (int) s[off];
    int n = 0;
    while (n < count && now - at(s, off, n) >= window) {
      n++;
    }
    return n;
  }

  @Override
  boolean test(long[] s, int off, long now, long cost, Probe probe) {
    int count = (int) s[off];
    int expired = expired(s, off, now);
    long live = count - expired;
    if (live + cost <= limit) {
      probe.remaining = limit - live - cost;
      probe.resetNanos = window;
      return true;
    }
    probe.remaining = limit - live;
    probe.resetNanos = at(s, off, count - 1) + window - now;
    int mustLeave = (int) (live + cost - limit);
    probe.retryAfterNanos = at(s, off, expired + mustLeave - 1) + window - now;
    return false;
  }

  @Override
  void commit(long[] s, int off, long now, long cost) {
    int count = (int) s[off];
    int expired = expired(s, off, now);
    long stamp = count > 0 ? Math.max(now, at(s, off, count - 1)) : now;
    long head = (s[off + 1] + expired) % limit;
    count -= expired;
    for (int i = 0; i < cost; i++) {
      s[off + 2 + (int) ((head + count) % limit)] = stamp;
      count++;
    }
    s[off] = count;
    s[off + 1] = head;
  }

  @Override
  boolean isFresh(long[] s, int off, long now) {
    int count = (int) s[off];
    return count == 0 || expired(s, off, now) == count;
  }
}
