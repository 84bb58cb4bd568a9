package dev.sluice.core;

/**
 * Fixed window: at most {@code limit} per aligned window {@code [k W, (k+1) W)}.
 *
 * <p>State: the window index and the count in it. Retry-after is the time to the window's end.
 * Seed 004: 600 per 60 s; the 601st call 45 s into a window waits 15 s. The known cost of the
 * design is the boundary: 600 at the end of one window and 600 at the start of the next. A stale
 * window index means a fresh state. A clock stepping back into an older window keeps the newer
 * window's count.
 */
final class FixedWindow extends Algorithm {

  private final long limit;
  private final long window;

  FixedWindow(long limit, long window) {
    this.limit = limit;
    this.window = window;
  }

  @Override
  int stateSize() {
    return 2;
  }

  @Override
  void init(long[] s, int off, long now) {
    s[off] = Math.floorDiv(now, window) - 1;
    s[off + 1] = 0;
  }

  private long count(long[] s, int off, long index) {
    return s[off] >= index ? s[off + 1] : 0;
  }

  @Override
  boolean test(long[] s, int off, long now, long cost, Probe probe) {
    long index = Math.max(Math.floorDiv(now, window), s[off]);
    long count = count(s, off, index);
    long end = (index + 1) * window - now;
    if (count + cost <= limit) {
      probe.remaining = limit - count - cost;
      probe.resetNanos = end;
      return true;
    }
    probe.remaining = limit - count;
    probe.resetNanos = end;
    probe.retryAfterNanos = end;
    return false;
  }

  @Override
  void commit(long[] s, int off, long now, long cost) {
    long index = Math.max(Math.floorDiv(now, window), s[off]);
    s[off + 1] = count(s, off, index) + cost;
    s[off] = index;
  }

  @Override
  boolean isFresh(long[] s, int off, long now) {
    return s[off + 1] == 0 || s[off] < Math.floorDiv(now, window);
  }
}
