package dev.sluice.core;

/**
 * Decaying score (seed 003): each action adds {@code perAction} points; the score falls by one
 * point per {@code decay} of elapsed time, continuously, floored at zero; an action is refused
 * when the score would exceed {@code max}.
 *
 * <p>Scores are fixed-point millionths of a point, so {@code 0.2 * 30 = 6} exactly and a limit of
 * 6 admits 30 typing indicators, not 29. Decay is continuous to one millionth of a point.
 *
 * <p>Worked numbers, seed 003's {@code chat:send} (1 per action, max 10, 1 per 2 s): ten actions
 * at t=0 reach 10; the eleventh would reach 11 and is refused. Retry-after is the exact time until
 * one point has decayed, 2 s. The seed tells the caller {@code currentScore * scoreDecayMs} = 20 s,
 * the time to decay to zero: an upper bound we report as the reset time instead.
 *
 * <p>State: {@code [score in millionths, last touched]}.
 */
final class DecayingScore extends Algorithm {

  static final long SCALE = 1_000_000L;

  private final long max;
  private final long perAction;
  private final long decay;

  DecayingScore(long max, long perAction, long decay) {
    this.max = max;
    this.perAction = perAction;
    this.decay = decay;
  }

  @Override
  int stateSize() {
    return 2;
  }

  @Override
  void init(long[] s, int off, long now) {
    s[off] = 0;
    s[off + 1] = now;
  }

  private long decayed(long[] s, int off, long now) {
    long score = s[off];
    if (score == 0) {
      return 0;
    }
    long elapsed = now - s[off + 1];
    if (elapsed <= 0) {
      return score;
    }
    if (elapsed >= Arith.mulDivCeil(score, decay, SCALE)) {
      return 0;
    }
    return score - Arith.mulDivFloor(elapsed, SCALE, decay);
  }

  @Override
  boolean test(long[] s, int off, long now, long cost, Probe probe) {
    long current = decayed(s, off, now);
    long next = current + perAction * cost;
    if (next <= max) {
      probe.remaining = (max - next) / perAction;
      probe.resetNanos = Arith.mulDivCeil(next, decay, SCALE);
      probe.score = (double) next / SCALE;
      return true;
    }
    // Decay is counted from the last touch, so the wait is measured from there too: part of the
    // needed point may already have decayed without showing in the floored score.
    long last = s[off + 1];
    probe.remaining = (max - current) / perAction;
    probe.resetNanos = last + Arith.mulDivCeil(s[off], decay, SCALE) - now;
    probe.retryAfterNanos = last + Arith.mulDivCeil(s[off] - (max - perAction * cost), decay, SCALE)
        - now;
    probe.score = (double) current / SCALE;
    return false;
  }

  @Override
  void commit(long[] s, int off, long now, long cost) {
    s[off] = decayed(s, off, now) + perAction * cost;
    s[off + 1] = Math.max(now, s[off + 1]);
  }

  @Override
  boolean isFresh(long[] s, int off, long now) {
    return decayed(s, off, now) == 0;
  }

  double max() {
    return (double) max / SCALE;
  }
}
