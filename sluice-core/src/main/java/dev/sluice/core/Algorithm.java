package dev.sluice.core;

/**
 * One limit's pure transition {@code (state, now, cost) -> (state', verdict)}, split in two so that
 * a check spanning several limits can test them all before committing any.
 *
 * <p>State is a run of longs inside a caller-owned array. Time is nanoseconds on the store's
 * timeline; stores hand algorithms {@code ticker - origin}, so values stay far from overflow.
 * Time that goes backwards never adds allowance.
 */
abstract class Algorithm {

  /** Number of longs of state. */
  abstract int stateSize();

  /** Writes the state of a key never seen before (which {@link #isFresh} reports as fresh). */
  abstract void init(long[] s, int off, long now);

  /**
   * Decides whether {@code cost} fits now, without changing the state. Fills {@code probe}:
   * remaining after the call (or now, if refused), time until the state is fresh again, and on
   * refusal the exact time until the same call would be allowed.
   */
  abstract boolean test(long[] s, int off, long now, long cost, Probe probe);

  /** Applies an allowed call. Only called right after a {@link #test} that returned true. */
  abstract void commit(long[] s, int off, long now, long cost);

  /** True when the state decides every future call exactly as a never-seen key would. */
  abstract boolean isFresh(long[] s, int off, long now);

  /** Scratch output of {@link #test}; one per thread, never shared. */
  static final class Probe {
    long remaining;
    long resetNanos;
    long retryAfterNanos;
    double score;

    void clear() {
      remaining = 0;
      resetNanos = 0;
      retryAfterNanos = 0;
      score = Double.NaN;
    }
  }
}
