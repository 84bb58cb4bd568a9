package dev.sluice.core;

import java.time.Duration;

/**
 * The outcome of a check, as a value. Adapters turn it into a 429, a close code or headers.
 *
 * <p>When refused, {@link #rule()} and {@link #limitName()} name the limit that refused (the one
 * with the longest wait when several did) and {@link #retryAfterNanos()} is the exact wait. When
 * allowed, they name the binding limit: the one with the fewest calls remaining, which is what
 * {@code X-RateLimit-*} headers report. Durations are nanoseconds from the decision's instant.
 *
 * <p>Immutable, except for its one subclass, {@link MutableDecision}, the caller-owned buffer of
 * allocation-free checks, whose values change with each check written into it.
 */
public sealed class Decision permits MutableDecision {

  private static final Decision UNLIMITED =
      new Decision(true, null, null, -1, -1, 0, 0, 0, false, false, Double.NaN, Double.NaN,
          null, false);

  // Not final so that MutableDecision can reuse them; a plain Decision never changes them.
  boolean allowed;
  String rule;
  String limitName;
  long limit;
  long remaining;
  long resetNanos;
  long retryAfterNanos;
  long windowNanos;
  boolean banned;
  boolean banApplied;
  double currentScore;
  double maxScore;
  String shadowRule;
  boolean degraded;
  /** Bit i set: rule i of the checked list refused (shadow rules included). */
  long refusedMask;

  Decision(boolean allowed, String rule, String limitName, long limit, long remaining,
      long resetNanos, long retryAfterNanos, long windowNanos, boolean banned, boolean banApplied,
      double currentScore, double maxScore, String shadowRule, boolean degraded) {
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

  /** A copy of {@code d}'s values. */
  Decision(Decision d) {
    this(d.allowed, d.rule, d.limitName, d.limit, d.remaining, d.resetNanos, d.retryAfterNanos,
        d.windowNanos, d.banned, d.banApplied, d.currentScore, d.maxScore, d.shadowRule,
        d.degraded);
    this.refusedMask = d.refusedMask;
  }

  /**
   * The decision when {@code rules} could not be decided: the store failed, or the check itself
   * threw. The first enforcing rule whose {@link OnStoreError} is {@code DENY} refuses; otherwise
   * the call is allowed. Either way it is marked {@link #degraded()}.
   */
  public static Decision failed(java.util.List<Rule> rules) {
    if (rules.isEmpty()) {
      return UNLIMITED;
    }
    MutableDecision d = new MutableDecision();
    d.storeFailed(rules);
    return d.snapshot();
  }

  /**
   * The refusal of {@code rule} alone when the admission step decides it outside a store's
   * check: a rule counted on responses found exhausted or banned, a concurrency cap found full,
   * a cooldown found locked. {@link #refusedBy(int) refusedBy(0)} is set; a shadow rule's is
   * allowed with the would-be refusal recorded, as a check reports it.
   *
   * @param limitName the limit that refused, or null for a ban
   * @param limit its capacity, or -1 when unknown
   */
  public static Decision refusal(Rule rule, String limitName, long limit, long retryAfterNanos,
      boolean banned) {
    boolean shadow = rule.mode() == Mode.SHADOW;
    long wait = Math.max(1, retryAfterNanos);
    Decision d = new Decision(shadow, rule.name(), limitName, limit, 0, wait, shadow ? 0 : wait,
        0, banned, false, Double.NaN, Double.NaN, shadow ? rule.name() : null, false);
    d.refusedMask = 1;
    return d;
  }

  /**
   * The decision of {@code rule} alone from a store's verdict outside a check: a reservation's
   * or a settlement's ({@link Store#reserveAsync}); a shadow rule's refusal is allowed with the
   * would-be refusal recorded, as a check reports it.
   */
  public static Decision of(Rule rule, Verdict verdict) {
    Cooldown cooldown = rule.cooldown();
    if (cooldown != null && !verdict.allowed() && rule.mode() == Mode.SHADOW) {
      return refusal(rule, rule.name(), cooldown.maxRetries(), verdict.retryAfterNanos(),
          verdict.banned());
    }
    MutableDecision d = new MutableDecision();
    if (cooldown != null) {
      d.cooldown(cooldown, verdict);
    } else {
      d.verdicts.reset(1);
      d.verdicts.set(0, verdict);
      d.refusedMask = d.fold(rule.asList(), d.verdicts);
    }
    return d.snapshot();
  }

  /** The decision of a check in which no rule applied. */
  public static Decision unlimited() {
    return UNLIMITED;
  }

  /**
   * This decision with other numbers: an adapter that writes the answers of one shape of
   * decision from a template renders such copies to find where the numbers go.
   */
  public Decision withNumbers(long remaining, long resetNanos, long retryAfterNanos) {
    Decision d = new Decision(this);
    d.remaining = remaining;
    d.resetNanos = resetNanos;
    d.retryAfterNanos = retryAfterNanos;
    return d;
  }

  /** True when the call may proceed (including shadow refusals and degraded allows). */
  public boolean allowed() {
    return allowed;
  }

  /** The deciding rule's name, or null when no rule applied. */
  public String rule() {
    return rule;
  }

  /** The deciding limit's name, or null when no rule applied or the key was banned. */
  public String limitName() {
    return limitName;
  }

  /** The deciding limit's capacity, or -1 when unknown. */
  public long limit() {
    return limit;
  }

  /** Calls of cost 1 left now under the deciding limit, or -1 when unknown. */
  public long remaining() {
    return remaining;
  }

  /** Time until the deciding limit is back to a fresh state. */
  public long resetNanos() {
    return resetNanos;
  }

  /** Time until the same call would be allowed; 0 when allowed. */
  public long retryAfterNanos() {
    return retryAfterNanos;
  }

  /** Whole seconds for a {@code Retry-After} header: rounded up, at least 1. */
  public long retryAfterSeconds() {
    return Math.max(1, -Math.floorDiv(-retryAfterNanos, 1_000_000_000L));
  }

  /** Milliseconds to wait, rounded up. */
  public long retryAfterMillis() {
    return -Math.floorDiv(-retryAfterNanos, 1_000_000L);
  }

  public Duration retryAfter() {
    return Duration.ofNanos(retryAfterNanos);
  }

  /** The deciding limit's policy window (see {@link Limit#windowNanos()}). */
  public long windowNanos() {
    return windowNanos;
  }

  /** True when refused because the key is banned. */
  public boolean banned() {
    return banned;
  }

  /** True when this very refusal started a ban (log it once). */
  public boolean banApplied() {
    return banApplied;
  }

  /** The score when a score limit decided, otherwise NaN. */
  public double currentScore() {
    return currentScore;
  }

  /** The score limit's maximum when a score limit decided, otherwise NaN. */
  public double maxScore() {
    return maxScore;
  }

  /** The shadow rule that would have refused, or null. */
  public String shadowRule() {
    return shadowRule;
  }

  /** True when a shadow rule would have refused this call. */
  public boolean shadowRefused() {
    return shadowRule != null;
  }

  /**
   * True when rule {@code index} of the list given to {@link RateLimiter#check(java.util.List,
   * Identity, long)} refused this call, as enforced or in shadow mode. Every evaluated rule gets
   * an answer, not only the deciding one, so metrics can count each rule's quota being spent. A
   * rule in mode {@link Mode#OFF}, a degraded decision and indices past 63 report false.
   */
  public boolean refusedBy(int index) {
    return index >= 0 && index < 64 && (refusedMask & (1L << index)) != 0;
  }

  /** True when the store failed and the rule's {@link OnStoreError} decided. */
  public boolean degraded() {
    return degraded;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(allowed ? "Allowed{" : "Refused{");
    sb.append("rule=").append(rule);
    // A refusal by a running ban was decided by no limit.
    boolean byBan = banned && !banApplied;
    if (byBan) {
      sb.append(", banned");
    } else {
      sb.append(", limit=").append(limitName).append('/').append(limit)
          .append(", remaining=").append(remaining).append(", reset=").append(resetNanos)
          .append("ns");
    }
    if (!allowed) {
      sb.append(", retryAfter=").append(retryAfterNanos).append("ns");
    }
    if (banApplied) {
      sb.append(", ban applied");
    }
    if (!Double.isNaN(currentScore)) {
      sb.append(", score=").append(currentScore).append('/').append(maxScore);
    }
    if (shadowRule != null) {
      sb.append(", shadowRefused=").append(shadowRule);
    }
    if (degraded) {
      sb.append(", degraded");
    }
    return sb.append('}').toString();
  }
}
