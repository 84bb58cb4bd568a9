package dev.sluice.netty;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Identity;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A stand-in for a remote store in handler tests: it decides with an in-memory store but answers
 * only when the test calls {@link #answer()}, as Redis answers after a round trip.
 */
final class RemoteStore implements Store {

  private final Store memory;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();

  RemoteStore(Store memory) {
    this.memory = memory;
  }

  /** Completes the oldest pending call; false when none is pending. */
  boolean answer() {
    Runnable next = waiting.poll();
    if (next == null) {
      return false;
    }
    next.run();
    return true;
  }

  int pending() {
    return waiting.size();
  }

  @Override
  public CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity, long cost,
      Verdicts out) {
    CompletableFuture<Verdicts> f = new CompletableFuture<>();
    waiting.add(() -> {
      memory.evaluate(rules, identity, cost, out);
      f.complete(out);
    });
    return f;
  }

  @Override
  public CompletionStage<Long> acquireAsync(String key, int max, long ttlNanos) {
    CompletableFuture<Long> f = new CompletableFuture<>();
    waiting.add(() -> f.complete(memory.acquire(key, max, ttlNanos)));
    return f;
  }

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    throw new AssertionError("a handler waited on the event loop");
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    throw new AssertionError("a handler waited on the event loop");
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    return memory.renew(key, lease, ttlNanos);
  }

  @Override
  public void release(String key, long lease) {
    memory.release(key, lease);
  }

  @Override
  public int leases(String key) {
    return memory.leases(key);
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    return memory.cooldown(key, policy, event);
  }

  @Override
  public long size() {
    return memory.size();
  }
}
