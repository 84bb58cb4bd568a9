package dev.sluice.bench.redis;

/**
 * Latencies in nanoseconds, log-linear buckets (128 per power of two, so under 1% error), one
 * per thread and merged at the end: no contention and no per-sample allocation while measuring.
 */
public final class Histogram {

  private static final int SUB_BITS = 7;
  private static final int SUB = 1 << SUB_BITS;

  private final long[] counts = new long[64 * SUB];
  private long total;

  public void record(long nanos) {
    counts[index(Math.max(1, nanos))]++;
    total++;
  }

  public void add(Histogram other) {
    for (int i = 0; i < counts.length; i++) {
      counts[i] += other.counts[i];
    }
    total += other.total;
  }

  public long count() {
    return total;
  }

  /** The value at quantile q (0..1), as the upper edge of its bucket. */
  public long quantile(double q) {
    long rank = Math.max(1, (long) Math.ceil(q * total));
    long seen = 0;
    for (int i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return upper(i);
      }
    }
    return 0;
  }

  private static int index(long v) {
    int exp = 63 - Long.numberOfLeadingZeros(v);
    if (exp < SUB_BITS) {
      return (int) v;
    }
    int shift = exp - SUB_BITS;
    int sub = (int) ((v >>> shift) & (SUB - 1));
    return (shift + 1) * SUB + sub;
  }

  private static long upper(int i) {
    if (i < SUB) {
      return i;
    }
    int shift = i / SUB - 1;
    long sub = i % SUB;
    return ((SUB + sub + 1) << shift) - 1;
  }
}
