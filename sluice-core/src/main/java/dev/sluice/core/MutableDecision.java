package dev.sluice.core;

import java.util.List;

/**
 * A caller-owned {@link Decision} that a check writes into instead of allocating one: with an
 * in-memory store, {@link RateLimiter#check(Rule, Identity, long, MutableDecision)} then allocates
 * nothing at all. Keep one per thread (or per connection, for an event loop) and reuse it; its
 * values change with every check written into it, so call {@link #snapshot()} to keep them.
 * Not thread-safe.
 */
public final class MutableDecision extends Decision {

  private static final long DEGRADED_RETRY_NANOS = 1_000_000_000L;

  /** The store's verdicts of the last check, reused. */
  final Verdicts verdicts = new Verdicts();

  public MutableDecision() {
    super(true, null, null, -1, -1, 0, 0, 0, false, false, Double.NaN, Double.NaN, null, false);
  }

  /** An immutable copy of the current values. */
  public Decision snapshot() {
    return new Decision(this);
  }

  /** No rule applied. */
  void setUnlimited() {
    set(true, null, null, -1, -1, 0, 0, 0, false, false, Double.NaN, Double.NaN, null, false);
    refusedMask = 0;
  }

  private void set(boolean allowed, String rule, String limitName, long limit, long remaining,
      long resetNanos, long retryAfterNanos, long windowNanos, boolean banned,
      boolean banApplied, double currentScore, double maxScore, String shadowRule,
      boolean degraded) {
    this.allowed = allowed;
    this.rule = rule;
    this.limitName = limitName;
    this.limit = limit;
    this.remaining = remaining;
    this.resetNanos = resetNanos;
    this.retryAfterNanos = retryAfterNanos;
    this.windowNanos = windowNanos;
    this.banned = banned;
    this.banApplied = banApplied;
    this.currentScore = currentScore;
    this.maxScore = maxScore;
    this.shadowRule = shadowRule;
    this.degraded = degraded;
  }

  /**
   * Folds the verdicts of {@code rules} into this decision: refused by the enforcing rule with
   * the longest wait; allowed with the binding rule (fewest remaining); shadow refusals reported.
   * Returns the mask of refusing rules, by index in {@code rules}.
   */
  long fold(List<Rule> rules, Verdicts v) {
    int refused = -1;
    int binding = -1;
    int shadow = -1;
    long mask = 0;
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (!v.allowed(i) && i < 64) {
        mask |= 1L << i;
      }
      if (rule.mode() == Mode.SHADOW) {
        if (!v.allowed(i) && shadow < 0) {
          shadow = i;
        }
      } else if (!v.allowed(i)) {
        if (refused < 0 || v.retryAfterNanos(i) > v.retryAfterNanos(refused)) {
          refused = i;
        }
      } else if (binding < 0 || v.remaining(i) < v.remaining(binding)) {
        binding = i;
      }
    }
    String shadowRule = shadow < 0 ? null : rules.get(shadow).name();
    int decider = refused >= 0 ? refused : binding >= 0 ? binding : shadow >= 0 ? shadow : 0;
    report(rules.get(decider), v, decider, refused < 0, shadowRule);
    return mask;
  }

  /** Reports verdict {@code i} of {@code rule}, the deciding rule of the check. */
  private void report(Rule rule, Verdicts v, int i, boolean allowed, String shadowRule) {
    boolean degraded = v.degraded();
    if (v.banned(i) && !v.banApplied(i)) {
      set(allowed, rule.name(), null, -1, 0, v.resetNanos(i), allowed ? 0 : v.retryAfterNanos(i),
          rule.banNanos(), true, false, Double.NaN, Double.NaN, shadowRule, degraded);
      return;
    }
    Limit limit = rule.limits().get(v.limitIndex(i));
    boolean scored = limit.kind() == Limit.Kind.SCORE && (!v.allowed(i) || !allowed);
    boolean ban = v.banApplied(i) && !allowed;
    set(allowed, rule.name(), limit.name(), limit.capacity(), v.remaining(i), v.resetNanos(i),
        allowed ? 0 : v.retryAfterNanos(i), limit.windowNanos(), ban, ban,
        scored ? v.score(i) : Double.NaN, scored ? limit.maxScore() : Double.NaN, shadowRule,
        degraded);
  }

  /**
   * The outcome of a one-rule check of a lone token bucket, written without a verdict buffer:
   * what {@link #fold} makes of the same verdict, for the in-memory store's fast path.
   */
  void tokenBucket(Rule rule, boolean ok, long remaining, long resetNanos, long retryNanos) {
    Limit limit = rule.limits().get(0);
    boolean shadowRefused = !ok && rule.mode() == Mode.SHADOW;
    boolean pass = ok || shadowRefused;
    set(pass, rule.name(), limit.name(), limit.capacity(), remaining, resetNanos,
        pass ? 0 : retryNanos, limit.windowNanos(), false, false, Double.NaN, Double.NaN,
        shadowRefused ? rule.name() : null, false);
    refusedMask = ok ? 0 : 1;
  }

  /** The store failed: the first enforcing rule that denies on failure refuses, else allowed. */
  void storeFailed(List<Rule> rules) {
    refusedMask = 0;
    for (Rule rule : rules) {
      if (rule.mode() == Mode.ENFORCE && rule.onStoreError() == OnStoreError.DENY) {
        set(false, rule.name(), null, -1, 0, DEGRADED_RETRY_NANOS, DEGRADED_RETRY_NANOS, 0, false,
            false, Double.NaN, Double.NaN, null, true);
        return;
      }
    }
    set(true, rules.get(0).name(), null, -1, -1, 0, 0, 0, false, false, Double.NaN, Double.NaN,
        null, true);
  }

  /** A cooldown's verdict. */
  void cooldown(Cooldown cooldown, Verdict v) {
    set(v.allowed(), cooldown.name(), cooldown.name(), cooldown.maxRetries(), v.remaining(),
        v.resetNanos(), v.retryAfterNanos(), cooldown.retryWindow().toNanos(), v.banned(),
        v.banApplied(), Double.NaN, Double.NaN, null, v.degraded());
    refusedMask = v.allowed() ? 0 : 1;
  }

  /** A cooldown whose store failed: allowed, degraded. */
  void cooldownFailed(Cooldown cooldown) {
    set(true, cooldown.name(), null, -1, -1, 0, 0, 0, false, false, Double.NaN, Double.NaN, null,
        true);
    refusedMask = 0;
  }
}
