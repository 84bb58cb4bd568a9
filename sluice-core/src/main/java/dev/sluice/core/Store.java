package dev.sluice.core;

import java.util.List;

/**
 * Where per-key state lives and where the algorithms run: in this JVM ({@link #memory}) or in
 * Redis ({@code sluice-redis}). A store owns its clock: the in-memory store reads a
 * {@link Ticker}, the Redis store the Redis server's {@code TIME}.
 *
 * <p>A store signals that it cannot answer (timeout, connection lost) by throwing
 * {@link StoreException}; the {@link RateLimiter} turns that into each rule's
 * {@link OnStoreError} outcome, so no exception reaches a request.
 */
public interface Store extends AutoCloseable {

  /**
   * Evaluates one check atomically. {@code keys.get(i)} is the key of {@code rules.get(i)}; no rule
   * is {@link Mode#OFF}. For each rule: a banned key is refused without touching its counters;
   * otherwise every limit is tested. If every {@link Mode#ENFORCE} rule allows, every allowing
   * rule consumes {@code cost}; if any refuses, nothing is consumed anywhere. An enforcing rule
   * with a ban that refuses on a limit starts its ban. Returns one verdict per rule, in order.
   */
  List<Verdict> evaluate(List<Rule> rules, List<String> keys, long cost);

  /**
   * Evaluates a check of one rule; the same as the list form, without its allocations. Stores
   * should override it: it is the hot path.
   */
  default Verdict evaluate(Rule rule, String key, long cost) {
    return evaluate(List.of(rule), List.of(key), cost).get(0);
  }

  /**
   * Takes a lease on {@code key} if fewer than {@code max} unexpired leases are held. Returns a
   * positive lease id, or 0 when full. A lease expires after {@code ttlNanos} unless renewed, so
   * a crashed holder cannot keep a slot forever.
   */
  long acquire(String key, int max, long ttlNanos);

  /** Extends a held lease by {@code ttlNanos} from now; false if it had expired or was released. */
  boolean renew(String key, long lease, long ttlNanos);

  /** Releases a lease. Idempotent: releasing twice, or an expired lease, does nothing. */
  void release(String key, long lease);

  /** Number of unexpired leases on {@code key}. */
  int leases(String key);

  /** Applies one event of an escalating cooldown to {@code key}. */
  Verdict cooldown(String key, Cooldown policy, Cooldown.Event event);

  /** Number of keys whose state is held, for metrics. */
  long size();

  @Override
  default void close() {}

  /**
   * An in-memory store holding at most {@code maxKeys} keys (see the class comment of the
   * implementation for eviction order), with time from {@code ticker}.
   */
  static Store memory(Ticker ticker, int maxKeys) {
    return new MemoryStore(ticker, maxKeys);
  }
}
