package dev.sluice.netty;

/**
 * Seed 001's strikes: a connection whose messages are refused {@code n} times within a window is
 * closed. The times of the last {@code n} refusals, in a ring.
 */
final class Strikes {

  private final long[] times;
  private final long windowNanos;
  private int count;

  Strikes(int n, long windowNanos) {
    this.times = new long[n];
    this.windowNanos = windowNanos;
  }

  /** Records a refusal at {@code now}; true when the last {@code n} fit in the window. */
  boolean strike(long now) {
    int n = times.length;
    times[count % n] = now;
    count++;
    if (count < n) {
      return false;
    }
    long oldest = times[count % n];
    return now - oldest <= windowNanos;
  }
}
