package dev.sluice.core;

/**
 * One rule's outcome inside a store, before the rate limiter folds a check's verdicts into a
 * {@link Decision}. Part of the {@link Store} contract: every store, in Java or in Lua, must
 * produce the same verdicts for the same trace.
 *
 * <p>{@code limitIndex} is the refusing limit when refused by a limit, otherwise the binding limit
 * (fewest remaining calls); -1 when banned. Durations are nanoseconds from the decision's instant.
 */
public final class Verdict {

  private final boolean allowed;
  private final int limitIndex;
  private final long remaining;
  private final long resetNanos;
  private final long retryAfterNanos;
  private final double score;
  private final boolean banned;
  private final boolean banApplied;
  private final boolean degraded;

  private Verdict(boolean allowed, int limitIndex, long remaining, long resetNanos,
      long retryAfterNanos, double score, boolean banned, boolean banApplied) {
    this(allowed, limitIndex, remaining, resetNanos, retryAfterNanos, score, banned, banApplied,
        false);
  }

  private Verdict(boolean allowed, int limitIndex, long remaining, long resetNanos,
      long retryAfterNanos, double score, boolean banned, boolean banApplied, boolean degraded) {
    this.degraded = degraded;
    this.allowed = allowed;
    this.limitIndex = limitIndex;
    this.remaining = remaining;
    this.resetNanos = resetNanos;
    this.retryAfterNanos = retryAfterNanos;
    this.score = score;
    this.banned = banned;
    this.banApplied = banApplied;
  }

  /** An allowed call; {@code limitIndex} is the binding limit; score is NaN unless it is a score. */
  public static Verdict allowed(int limitIndex, long remaining, long resetNanos, double score) {
    return new Verdict(true, limitIndex, remaining, resetNanos, 0, score, false, false);
  }

  /**
   * A call refused by limit {@code limitIndex}; {@code banApplied} when this refusal started the
   * rule's ban (then retry-after is the ban's length).
   */
  public static Verdict refused(int limitIndex, long remaining, long resetNanos,
      long retryAfterNanos, double score, boolean banApplied) {
    return new Verdict(false, limitIndex, remaining, resetNanos, retryAfterNanos, score,
        banApplied, banApplied);
  }

  /** A call refused because the key is banned for {@code retryAfterNanos} more. */
  public static Verdict banned(long retryAfterNanos) {
    return new Verdict(false, -1, 0, retryAfterNanos, retryAfterNanos, Double.NaN, true, false);
  }

  public boolean allowed() {
    return allowed;
  }

  public int limitIndex() {
    return limitIndex;
  }

  public long remaining() {
    return remaining;
  }

  public long resetNanos() {
    return resetNanos;
  }

  public long retryAfterNanos() {
    return retryAfterNanos;
  }

  public double score() {
    return score;
  }

  public boolean banned() {
    return banned;
  }

  public boolean banApplied() {
    return banApplied;
  }

  /** True when a fallback answered because the primary store failed. */
  public boolean degraded() {
    return degraded;
  }

  /** This verdict, marked as answered by a fallback store. */
  public Verdict asDegraded() {
    return new Verdict(allowed, limitIndex, remaining, resetNanos, retryAfterNanos, score, banned,
        banApplied, true);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Verdict v && allowed == v.allowed && limitIndex == v.limitIndex
        && remaining == v.remaining && resetNanos == v.resetNanos
        && retryAfterNanos == v.retryAfterNanos && Double.compare(score, v.score) == 0
        && banned == v.banned && banApplied == v.banApplied && degraded == v.degraded;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(retryAfterNanos) * 31 + Long.hashCode(remaining) + (allowed ? 1 : 0);
  }

  @Override
  public String toString() {
    return (allowed ? "allowed" : banned ? "banned" : "refused") + "{limit=" + limitIndex
        + ", remaining=" + remaining + ", reset=" + resetNanos + "ns, retryAfter="
        + retryAfterNanos + "ns" + (Double.isNaN(score) ? "" : ", score=" + score)
        + (banApplied ? ", banApplied" : "") + (degraded ? ", degraded" : "") + "}";
  }
}
