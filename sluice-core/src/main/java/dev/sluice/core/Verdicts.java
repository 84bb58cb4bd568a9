package dev.sluice.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The verdicts of one check, one per rule in check order, written by a {@link Store} into a
 * buffer its caller owns and reuses, so a check allocates no verdict objects. Part of the store
 * contract: every store, in Java or in Lua, must write the same verdicts for the same trace.
 *
 * <p>For each rule: allowed, refused by a limit (and whether that refusal started the rule's ban)
 * or refused because the key is banned. {@code limitIndex} is the refusing limit when refused by
 * a limit, otherwise the binding limit (fewest remaining calls); -1 when banned. Durations are
 * nanoseconds from the decision's instant. Not thread-safe: one check at a time.
 */
public final class Verdicts {

  private static final byte ALLOWED = 0;
  private static final byte REFUSED = 1;
  private static final byte BAN_APPLIED = 2;
  private static final byte BANNED = 3;

  private int size;
  private byte[] kind;
  private int[] limitIndex;
  private long[] remaining;
  private long[] reset;
  private long[] retryAfter;
  private double[] score;
  private boolean degraded;
  private final CompletionStage<Verdicts> completed = CompletableFuture.completedStage(this);

  /** Scratch of the in-memory store, kept with the buffer so a check allocates none. */
  Object scratch;
  final Algorithm.Probe probe = new Algorithm.Probe();

  public Verdicts() {
    allocate(4);
  }

  private void allocate(int n) {
    kind = new byte[n];
    limitIndex = new int[n];
    remaining = new long[n];
    reset = new long[n];
    retryAfter = new long[n];
    score = new double[n];
  }

  /** Clears the buffer for a check of {@code rules} rules. */
  public void reset(int rules) {
    if (rules > kind.length) {
      allocate(Math.max(rules, kind.length * 2));
    }
    size = rules;
    degraded = false;
  }

  public int size() {
    return size;
  }

  /** Rule {@code i} allows; {@code score} is NaN unless the binding limit is a score. */
  public void allow(int i, int limitIndex, long remaining, long resetNanos, double score) {
    set(i, ALLOWED, limitIndex, remaining, resetNanos, 0, score);
  }

  /**
   * Rule {@code i} is refused by limit {@code limitIndex}; {@code banApplied} when this refusal
   * started the rule's ban (then retry-after is the ban's length).
   */
  public void refuse(int i, int limitIndex, long remaining, long resetNanos, long retryAfterNanos,
      double score, boolean banApplied) {
    set(i, banApplied ? BAN_APPLIED : REFUSED, limitIndex, remaining, resetNanos,
        retryAfterNanos, score);
  }

  /** Rule {@code i} is refused because its key is banned for {@code retryAfterNanos} more. */
  public void ban(int i, long retryAfterNanos) {
    set(i, BANNED, -1, 0, retryAfterNanos, retryAfterNanos, Double.NaN);
  }

  /** Rule {@code i} gets {@code v}. */
  public void set(int i, Verdict v) {
    byte k = v.allowed() ? ALLOWED : v.banned() ? (v.banApplied() ? BAN_APPLIED : BANNED)
        : REFUSED;
    set(i, k, v.limitIndex(), v.remaining(), v.resetNanos(), v.retryAfterNanos(), v.score());
  }

  private void set(int i, byte k, int limit, long rem, long res, long retry, double sc) {
    if (i >= size) {
      throw new IndexOutOfBoundsException("verdict " + i + " of " + size);
    }
    kind[i] = k;
    limitIndex[i] = limit;
    remaining[i] = rem;
    reset[i] = res;
    retryAfter[i] = retry;
    score[i] = sc;
  }

  /** Marks every verdict as answered by a fallback store because the primary failed. */
  public void markDegraded() {
    degraded = true;
  }

  public boolean allowed(int i) {
    return kind[i] == ALLOWED;
  }

  public int limitIndex(int i) {
    return limitIndex[i];
  }

  public long remaining(int i) {
    return remaining[i];
  }

  public long resetNanos(int i) {
    return reset[i];
  }

  public long retryAfterNanos(int i) {
    return retryAfter[i];
  }

  public double score(int i) {
    return score[i];
  }

  /** True when refused because of a ban, already running or started by this refusal. */
  public boolean banned(int i) {
    return kind[i] >= BAN_APPLIED;
  }

  /** True when this refusal started the rule's ban. */
  public boolean banApplied(int i) {
    return kind[i] == BAN_APPLIED;
  }

  public boolean degraded() {
    return degraded;
  }

  /** Verdict {@code i} as a value (allocates; for tests, caches and logs). */
  public Verdict get(int i) {
    if (i >= size) {
      throw new IndexOutOfBoundsException("verdict " + i + " of " + size);
    }
    Verdict v = switch (kind[i]) {
      case ALLOWED -> Verdict.allowed(limitIndex[i], remaining[i], reset[i], score[i]);
      case BANNED -> Verdict.banned(retryAfter[i]);
      default -> Verdict.refused(limitIndex[i], remaining[i], reset[i], retryAfter[i], score[i],
          kind[i] == BAN_APPLIED);
    };
    return degraded ? v.asDegraded() : v;
  }

  /** Every verdict as a value (allocates). */
  public List<Verdict> toList() {
    List<Verdict> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(get(i));
    }
    return out;
  }

  /**
   * A stage already completed with this buffer, created once: what a store that answers on the
   * calling thread returns from {@link Store#evaluateAsync}, so doing so allocates nothing.
   */
  public CompletionStage<Verdicts> completed() {
    return completed;
  }

  @Override
  public String toString() {
    return toList() + (degraded ? " degraded" : "");
  }
}
