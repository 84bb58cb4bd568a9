package dev.sluice.redis;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Identity;
import dev.sluice.core.KeyState;
import dev.sluice.core.Reservation;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * "Fails local": the Redis store, and when it cannot answer ({@link StoreException}, or a stage
 * failed with one) a fallback store answers instead; decisions and cooldowns it answers are
 * marked degraded. One wrapper for every operation, synchronous or not, instead of a try/catch
 * in each. The fallback's asynchronous methods are used, so an in-memory fallback answers on
 * the thread that saw the failure with no hop, and a remote one without waiting.
 */
final class FallbackStore implements Store {

  private final LettuceStore primary;
  private final Store fallback;

  FallbackStore(LettuceStore primary, Store fallback) {
    this.primary = primary;
    this.fallback = fallback;
  }

  LettuceStore primary() {
    return primary;
  }

  @Override
  public CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity, long cost,
      Verdicts out) {
    return async(() -> primary.evaluateAsync(rules, identity, cost, out),
        () -> fallback.evaluateAsync(rules, identity, cost, out).thenApply(v -> {
          v.markDegraded();
          return v;
        }));
  }

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    sync(() -> {
      primary.evaluate(rules, identity, cost, out);
      return null;
    }, () -> {
      fallback.evaluate(rules, identity, cost, out);
      out.markDegraded();
      return null;
    });
  }

  @Override
  public CompletionStage<Long> acquireAsync(String key, int max, long ttlNanos) {
    return async(() -> primary.acquireAsync(key, max, ttlNanos),
        () -> fallback.acquireAsync(key, max, ttlNanos));
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    return sync(() -> primary.acquire(key, max, ttlNanos),
        () -> fallback.acquire(key, max, ttlNanos));
  }

  @Override
  public CompletionStage<Boolean> renewAsync(String key, long lease, long ttlNanos) {
    return async(() -> primary.renewAsync(key, lease, ttlNanos),
        () -> fallback.renewAsync(key, lease, ttlNanos));
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    return sync(() -> primary.renew(key, lease, ttlNanos),
        () -> fallback.renew(key, lease, ttlNanos));
  }

  @Override
  public CompletionStage<Void> releaseAsync(String key, long lease) {
    return async(() -> primary.releaseAsync(key, lease), () -> fallback.releaseAsync(key, lease));
  }

  @Override
  public void release(String key, long lease) {
    sync(() -> {
      primary.release(key, lease);
      return null;
    }, () -> {
      fallback.release(key, lease);
      return null;
    });
  }

  @Override
  public int leases(String key) {
    return sync(() -> primary.leases(key), () -> fallback.leases(key));
  }

  @Override
  public CompletionStage<Verdict> cooldownAsync(String key, Cooldown policy,
      Cooldown.Event event) {
    return async(() -> primary.cooldownAsync(key, policy, event),
        () -> fallback.cooldownAsync(key, policy, event).thenApply(Verdict::asDegraded));
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    return sync(() -> primary.cooldown(key, policy, event),
        () -> fallback.cooldown(key, policy, event).asDegraded());
  }

  @Override
  public CompletionStage<Reservation> reserveAsync(Rule rule, Identity identity, long cost,
      long ttlNanos) {
    return async(() -> primary.reserveAsync(rule, identity, cost, ttlNanos),
        () -> fallback.reserveAsync(rule, identity, cost, ttlNanos));
  }

  /** A reservation the fallback held is unknown to Redis: dropping it there does nothing. */
  @Override
  public CompletionStage<Verdict> settleAsync(Rule rule, Identity identity, long id, long cost,
      Reservation.Settlement how) {
    return async(() -> primary.settleAsync(rule, identity, id, cost, how),
        () -> fallback.settleAsync(rule, identity, id, cost, how).thenApply(Verdict::asDegraded));
  }

  // The admin view reads and edits Redis, the shared state, only: while Redis fails it fails
  // too; the fallback's keys are a per-process stand-in that ends with the outage.

  @Override
  public CompletionStage<List<KeyState>> refusedAsync(Rule rule, int limit) {
    return primary.refusedAsync(rule, limit);
  }

  @Override
  public CompletionStage<KeyState> keyStateAsync(Rule rule, String key) {
    return primary.keyStateAsync(rule, key);
  }

  @Override
  public CompletionStage<KeyState> peekAsync(Rule rule, dev.sluice.core.Identity identity) {
    return primary.peekAsync(rule, identity);
  }

  @Override
  public CompletionStage<Boolean> banAsync(Rule rule, String key, java.time.Duration length) {
    return primary.banAsync(rule, key, length);
  }

  @Override
  public CompletionStage<Boolean> unbanAsync(Rule rule, String key) {
    return primary.unbanAsync(rule, key);
  }

  @Override
  public CompletionStage<Boolean> resetAsync(Rule rule, String key) {
    return primary.resetAsync(rule, key);
  }

  /** Keys in Redis: the fallback's are a stand-in, not the shared count. */
  @Override
  public long size() {
    return primary.size();
  }

  /** Closes the Redis store; the fallback belongs to whoever built it. */
  @Override
  public void close() {
    primary.close();
  }

  @Override
  public String toString() {
    return primary + " falling back to " + fallback;
  }

  private static <T> T sync(Supplier<T> first, Supplier<T> instead) {
    try {
      return first.get();
    } catch (StoreException e) {
      return instead.get();
    }
  }

  private static <T> CompletionStage<T> async(Supplier<CompletionStage<T>> first,
      Supplier<CompletionStage<T>> instead) {
    CompletionStage<T> stage;
    try {
      stage = first.get();
    } catch (StoreException e) {
      return instead.get();
    }
    return stage.exceptionallyCompose(e -> Library.unwrap(e) instanceof StoreException
        ? instead.get() : CompletableFuture.failedStage(e));
  }
}
