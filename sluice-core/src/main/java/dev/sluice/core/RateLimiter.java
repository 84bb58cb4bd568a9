package dev.sluice.core;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

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
 *
 * <p>Three ways to ask, one semantics: {@link #check(List, Identity, long)} returns a new
 * {@link Decision}; {@link #check(List, Identity, long, MutableDecision)} writes into a buffer the
 * caller reuses and allocates nothing with an in-memory store; {@link #checkAsync} never waits on
 * a remote store, for event loops (with an in-memory store its stage is complete on return).
 */
public interface RateLimiter {

  /** A rate limiter over {@code store}. */
  static RateLimiter of(Store store) {
    return new DefaultRateLimiter(store);
  }

  /** Checks one rule at cost 1. */
  Decision check(Rule rule, Identity identity);

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
   * Checks one rule and writes the outcome into {@code into}; returns whether it is allowed.
   * Allocates nothing with an in-memory store.
   */
  boolean check(Rule rule, Identity identity, long cost, MutableDecision into);

  /** {@link #check(List, Identity, long)}, written into {@code into}; returns allowed. */
  boolean check(List<Rule> rules, Identity identity, long cost, MutableDecision into);

  /**
   * {@link #check(List, Identity, long)} without waiting: the stage completes when the store has
   * answered (or its deadline passed, then with each rule's {@link OnStoreError} outcome); it
   * never completes exceptionally. With an in-memory store it is complete on return.
   *
   * @throws IllegalArgumentException if {@code cost} is not positive or exceeds a limit's capacity
   */
  CompletionStage<Decision> checkAsync(List<Rule> rules, Identity identity, long cost);

  /**
   * Takes a concurrency lease (one open WebSocket, one running job). Empty when the cap is
   * reached; close the lease to give the slot back.
   */
  Optional<Lease> acquire(ConcurrencyLimit limit, Identity identity);

  /** {@link #acquire} without waiting; the stage never completes exceptionally. */
  CompletionStage<Optional<Lease>> acquireAsync(ConcurrencyLimit limit, Identity identity);

  /** Applies one event of an escalating cooldown; refused while the key is locked. */
  Decision cooldown(Cooldown cooldown, Identity identity, Cooldown.Event event);

  /** {@link #cooldown} without waiting; the stage never completes exceptionally. */
  CompletionStage<Decision> cooldownAsync(Cooldown cooldown, Identity identity,
      Cooldown.Event event);

  /** The store behind this limiter. */
  Store store();
}
