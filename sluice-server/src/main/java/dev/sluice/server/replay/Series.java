package dev.sluice.server.replay;

/**
 * Counts over time in at most {@link #MAX} buckets aligned to the epoch: buckets start at 1 s
 * and double (two merged into one) whenever the replay outgrows them, so a week of log costs as
 * little as a minute of it. Rows are series (per rule: requests, refused, shadow-refused; per
 * client: requests, refused).
 */
final class Series {

  static final int MAX = 720;
  static final long FIRST_WIDTH = 1_000_000;

  long width = FIRST_WIDTH;
  /** The first bucket's index (epoch time / width); Long.MIN_VALUE before any count. */
  long first = Long.MIN_VALUE;
  int used;
  long[][] rows;

  Series(int rows) {
    this.rows = new long[rows][MAX];
  }

  /** The bucket of {@code micros}, widening the buckets first if it lies past the last one. */
  int bucket(long micros) {
    long b = Math.floorDiv(micros, width);
    if (first == Long.MIN_VALUE) {
      first = b;
    }
    while (b - first >= MAX) {
      widen();
      b = Math.floorDiv(micros, width);
    }
    int i = (int) Math.max(0, b - first);
    used = Math.max(used, i + 1);
    return i;
  }

  void add(int row, int bucket, long n) {
    rows[row][bucket] += n;
  }

  /** Twice as wide: bucket pairs (aligned to the epoch) merge. */
  void widen() {
    long nf = Math.floorDiv(first, 2);
    for (long[] row : rows) {
      long[] out = new long[MAX];
      for (int i = 0; i < used; i++) {
        out[(int) (Math.floorDiv(first + i, 2) - nf)] += row[i];
      }
      System.arraycopy(out, 0, row, 0, MAX);
    }
    used = used == 0 ? 0 : (int) (Math.floorDiv(first + used - 1, 2) - nf) + 1;
    first = nf;
    width *= 2;
  }

  /** Widens this to at least {@code w} and to a start at or before {@code f * w}. */
  void alignTo(long w) {
    while (width < w) {
      widen();
    }
  }

  /** Adds {@code other}'s counts (both must cover the same rows). */
  void addAll(Series other) {
    if (other.first == Long.MIN_VALUE) {
      return;
    }
    Series o = other.copy();
    o.alignTo(width);
    alignTo(o.width);
    if (first == Long.MIN_VALUE) {
      first = o.first;
    }
    long lo = Math.min(first, o.first);
    long hi = Math.max(first + used, o.first + o.used);
    while (hi - lo > MAX) {
      widen();
      o.widen();
      lo = Math.min(first, o.first);
      hi = Math.max(first + used, o.first + o.used);
    }
    if (lo < first) {
      int shift = (int) (first - lo);
      for (long[] row : rows) {
        System.arraycopy(row, 0, row, shift, used);
        java.util.Arrays.fill(row, 0, shift, 0);
      }
      used += shift;
      first = lo;
    }
    for (int r = 0; r < rows.length; r++) {
      for (int i = 0; i < o.used; i++) {
        rows[r][(int) (o.first - first) + i] += o.rows[r][i];
      }
    }
    used = (int) Math.max(used, o.first + o.used - first);
  }

  Series copy() {
    Series s = new Series(rows.length);
    s.width = width;
    s.first = first;
    s.used = used;
    for (int r = 0; r < rows.length; r++) {
      System.arraycopy(rows[r], 0, s.rows[r], 0, MAX);
    }
    return s;
  }

  /** The start of bucket {@code i}, in epoch milliseconds. */
  long startMillis(int i) {
    return (first + i) * width / 1000;
  }
}
