package dev.sluice.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Where per-key state lives and where the algorithms run: in this JVM ({@link #memory}) or in
 * Redis ({@code sluice-redis}). A store owns its clock: the in-memory store reads a
 * {@link Ticker}, the Redis store the Redis server's {@code TIME}. A store also owns its keys:
 * the in-memory store hashes the rule and the identity's values ({@link Rule#keyFor} is never
 * called on its path); a remote store uses the readable key {@link Rule#keyFor} builds.
 *
 * <p>A store signals that it cannot answer (timeout, connection lost) by throwing
 * {@link StoreException}, or by completing an asynchronous call exceptionally; the
 * {@link RateLimiter} turns that into each rule's {@link OnStoreError} outcome, so no exception
 * reaches a request.
 */
public interface Store extends AutoCloseable {

  /**
   * Evaluates one check atomically and writes one verdict per rule into {@code out} (after
   * {@link Verdicts#reset}). No rule is {@link Mode#OFF}. For each rule: a banned key is refused
   * without touching its counters; otherwise every limit is tested. If every {@link Mode#ENFORCE}
   * rule allows, every allowing rule consumes {@code cost}; if any refuses, nothing is consumed
   * anywhere. An enforcing rule with a ban that refuses on a limit starts its ban.
   */
  void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out);

  /**
   * A hint that checks are about to be made, of {@code rules[i]} for {@code identities[i]} for
   * each {@code i < count}: the store may start bringing those keys' state into the CPU's cache
   * now, all at once, so that a caller deciding many requests in a row (the replay) overlaps
   * their memory latency instead of waiting for each key in turn. Decides, inserts and changes
   * nothing, and never throws on a rule it does not know; this default does nothing.
   */
  default void prefetch(List<Rule>[] rules, Identity[] identities, int count) {}

  /**
   * {@link #evaluate} without waiting: the stage completes with {@code out} once the verdicts
   * are in it, or exceptionally when the store cannot answer. A store that answers in this JVM
   * completes it before returning and returns {@link Verdicts#completed()}, so it allocates
   * nothing more than {@link #evaluate}; this default does exactly that.
   */
  default CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity, long cost,
      Verdicts out) {
    try {
      evaluate(rules, identity, cost, out);
      return out.completed();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * True when every call completes on the calling thread before returning (an in-memory store),
   * so an event loop need not pause a connection for it. False by default.
   */
  default boolean isLocal() {
    return false;
  }

  /**
   * Takes a lease on {@code key} if fewer than {@code max} unexpired leases are held. Returns a
   * positive lease id, or 0 when full. A lease expires after {@code ttlNanos} unless renewed, so
   * a crashed holder cannot keep a slot forever.
   */
  long acquire(String key, int max, long ttlNanos);

  /** {@link #acquire} without waiting; this default runs it on the calling thread. */
  default CompletionStage<Long> acquireAsync(String key, int max, long ttlNanos) {
    return now(() -> acquire(key, max, ttlNanos));
  }

  /** Extends a held lease by {@code ttlNanos} from now; false if it had expired or was released. */
  boolean renew(String key, long lease, long ttlNanos);

  /** {@link #renew} without waiting; this default runs it on the calling thread. */
  default CompletionStage<Boolean> renewAsync(String key, long lease, long ttlNanos) {
    return now(() -> renew(key, lease, ttlNanos));
  }

  /** Releases a lease. Idempotent: releasing twice, or an expired lease, does nothing. */
  void release(String key, long lease);

  /** {@link #release} without waiting; this default runs it on the calling thread. */
  default CompletionStage<Void> releaseAsync(String key, long lease) {
    return now(() -> {
      release(key, lease);
      return null;
    });
  }

  /** Number of unexpired leases on {@code key}. */
  int leases(String key);

  /** Applies one event of an escalating cooldown to {@code key}. */
  Verdict cooldown(String key, Cooldown policy, Cooldown.Event event);

  /** {@link #cooldown} without waiting; this default runs it on the calling thread. */
  default CompletionStage<Verdict> cooldownAsync(String key, Cooldown policy,
      Cooldown.Event event) {
    return now(() -> cooldown(key, policy, event));
  }

  /**
   * Reserves {@code cost} of {@code rule}, a rule counted on responses (see {@link Reservation}),
   * for a request about to go on, atomically with every other reservation and settlement of the
   * key. For a rule of limits: a banned key is refused; a key whose settled state refuses
   * {@code cost} is refused as a check would be (an enforcing rule's refusal starting its ban);
   * otherwise, when the reservations held on the key plus {@code cost} would not pass, it is
   * refused {@linkplain Reservation#inFlight() in flight} (no ban); otherwise the reservation is
   * held. For a cooldown: a locked key is refused; failures plus reservations held reaching
   * {@code maxRetries} refuse in flight. A reservation not settled within {@code ttlNanos} (its
   * holder crashed) lapses and holds nothing more.
   */
  default CompletionStage<Reservation> reserveAsync(Rule rule, Identity identity, long cost,
      long ttlNanos) {
    return unsupported();
  }

  /**
   * Ends reservation {@code id} of {@link #reserveAsync}, in one atomic step: the share is given
   * back and, for {@link Reservation.Settlement#FAILURE}, {@code cost} is spent (a rule of limits
   * is checked and spends it, an enforcing rule's refusal starting its ban; a cooldown counts a
   * failure and may lock); for {@link Reservation.Settlement#SUCCESS}, a cooldown that
   * {@linkplain Rule#resetsOnSuccess resets on success} for {@code identity} starts over. The
   * verdict is the spending's, or an allowing one. A lapsed or unknown id still spends.
   */
  default CompletionStage<Verdict> settleAsync(Rule rule, Identity identity, long id, long cost,
      Reservation.Settlement how) {
    return unsupported();
  }

  // Incident tools (the admin API). A key is named by its text as Rule#keyText gives it; a store
  // that keeps no such view fails these stages with UnsupportedOperationException.

  /**
   * The keys of {@code rule} seen refused lately that still refuse a call of cost 1 (banned or
   * exhausted), most recently refused first, at most {@code limit} (and {@link KeyState#MAX_LIST}).
   * A bounded sample kept off the allowed path, not an index of every key: see the store.
   */
  default CompletionStage<List<KeyState>> refusedAsync(Rule rule, int limit) {
    return unsupported();
  }

  /** The state of {@code key} under {@code rule}; changes nothing. */
  default CompletionStage<KeyState> keyStateAsync(Rule rule, String key) {
    return unsupported();
  }

  /**
   * The state of {@code identity}'s key under {@code rule}; changes nothing. What the admission
   * step reads of a rule counted on responses before its request goes on ({@link
   * KeyState#refusing()}). By default {@link #keyStateAsync} of the key text.
   */
  default CompletionStage<KeyState> peekAsync(Rule rule, Identity identity) {
    return keyStateAsync(rule, rule.keyText(identity));
  }

  /**
   * Bans {@code key} under {@code rule} (a rule with a {@link Rule#ban()}, whose state has room
   * for one) for {@code length} from now, replacing any ban it had; its limits stay as they
   * are. An operator's ban, as the admin API sets it.
   */
  default CompletionStage<Boolean> banAsync(Rule rule, String key, java.time.Duration length) {
    return unsupported();
  }

  /** Lifts the ban of {@code key} under {@code rule}; true if it was banned. Limits stay. */
  default CompletionStage<Boolean> unbanAsync(Rule rule, String key) {
    return unsupported();
  }

  /** Forgets {@code key}'s state under {@code rule} (a full limit, no ban); true if it had any. */
  default CompletionStage<Boolean> resetAsync(Rule rule, String key) {
    return unsupported();
  }

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

  private <T> CompletionStage<T> unsupported() {
    return CompletableFuture.failedFuture(new UnsupportedOperationException(
        "the store " + this + " keeps no admin view"));
  }

  private static <T> CompletionStage<T> now(Supplier<T> call) {
    try {
      return CompletableFuture.completedFuture(call.get());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
