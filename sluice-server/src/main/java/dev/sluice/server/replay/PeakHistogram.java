package dev.sluice.server.replay;

/**
 * How many clients reached each peak count within a rule's window: exact bins for counts up to
 * 1,024, then 16 bins per doubling (a bin is at most 4.4% wide), so the distribution of a
 * million clients costs a few kilobytes. {@link #limitFor} reads off the smallest limit that
 * would have refused at most a given share of clients.
 */
final class PeakHistogram {

  static final int EXACT = 1024;
  private static final int PER_OCTAVE = 16;
  private static final int BINS = EXACT + 1 + 22 * PER_OCTAVE;

  final long[] counts = new long[BINS];
  long total;

  /** The bin of a peak count (whole requests: a fraction rounds up). */
  static int bin(double peak) {
    long v = (long) Math.ceil(peak - 1e-9);
    if (v <= EXACT) {
      return (int) Math.max(0, v);
    }
    double octaves = Math.log((double) v / EXACT) / Math.log(2);
    int i = (int) Math.min(BINS - 1, Math.max(EXACT + 1, EXACT + Math.ceil(octaves * PER_OCTAVE)));
    // Floating point may land a bin off: the bin is the first whose top reaches v.
    while (i < BINS - 1 && upper(i) < v) {
      i++;
    }
    while (i > EXACT + 1 && upper(i - 1) >= v) {
      i--;
    }
    return i;
  }

  /** The largest count in bin {@code i}. */
  static long upper(int i) {
    if (i <= EXACT) {
      return i;
    }
    return (long) Math.floor(EXACT * Math.pow(2, (i - EXACT) / (double) PER_OCTAVE));
  }

  /** The smallest count in bin {@code i}. */
  static long lower(int i) {
    return i <= EXACT ? i : upper(i - 1) + 1;
  }

  void add(double peak) {
    counts[bin(peak)]++;
    total++;
  }

  void addAll(PeakHistogram other) {
    for (int i = 0; i < BINS; i++) {
      counts[i] += other.counts[i];
    }
    total += other.total;
  }

  /** Clients whose peak is above {@code limit} (all of a bin above it; a bin is whole counts). */
  long above(long limit) {
    long n = 0;
    for (int i = 0; i < BINS; i++) {
      if (lower(i) > limit) {
        n += counts[i];
      }
    }
    return n;
  }

  /**
   * The smallest limit with at most {@code share} of the clients above it (refused by a limit of
   * that many per window); exact up to 1,024, the top of a bin beyond.
   */
  long limitFor(double share) {
    long allowedAbove = (long) Math.floor(share * total + 1e-9);
    long above = total;
    for (int i = 0; i < BINS; i++) {
      above -= counts[i];
      if (above <= allowedAbove) {
        return Math.max(1, upper(i));
      }
    }
    return Math.max(1, upper(BINS - 1));
  }

  /** The highest bin with clients, or -1. */
  int last() {
    for (int i = BINS - 1; i >= 0; i--) {
      if (counts[i] > 0) {
        return i;
      }
    }
    return -1;
  }
}
