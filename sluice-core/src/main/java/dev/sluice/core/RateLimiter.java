package dev.sluice.core;

import java.util.List;
import java.util.Optional;

/**
 * The engine's entry point: checks rules for an identity against a {@link Store}. Thread-safe.
 * Apart from programming errors (a cost of zero, a cost above a limit's capacity), no method
 * throws: a failing store yields each rule's {@link OnStoreError} outcome, marked degraded.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.of(Store.memory(Ticker.system(), 100_000));
 * Rule analysis = Rule.builder("analysis")
 *     .limit(Limit.tokenBucket("analysis", 15, 30, Duration.ofMinutes(1)))
 *     .build();
 * Decision d = limiter.check(analysis, Identity.ip("203.0.113.7"));
 * }</pre>
 */
public interface RateLimiter {

  /** A rate limiter over {@code store}. */
  static RateLimiter of(Store store) {
    return new DefaultRateLimiter(store);
  }

  /** Checks one rule at cost 1. */
  default Decision check(Rule rule, Identity identity) {
    return check(List.of(rule), identity, 1);
  }

  /**
   * Checks several rules as one atomic step: all must pass; if any enforcing rule refuses,
   * nothing is consumed by any of them (seed 001's session-then-IP check, without its manual
   * rollback). Rules in {@link Mode#OFF} are skipped; {@link Mode#SHADOW} rules are decided and
   * reported in {@link Decision#shadowRule()} but never refuse.
   *
   * @throws IllegalArgumentException if {@code cost} is not positive or exceeds a limit's capacity
   */
  Decision check(List<Rule> rules, Identity identity, long cost);

  /**
   * Takes a concurrency lease (one open WebSocket, one running job). Empty when the cap is
   * reached; close the lease to give the slot back.
   */
  Optional<Lease> acquire(ConcurrencyLimit limit, Identity identity);

  /** Applies one event of an escalating cooldown; refused while the key is locked. */
  Decision cooldown(Cooldown cooldown, Identity identity, Cooldown.Event event);

  /** The store behind this limiter. */
  Store store();
}
