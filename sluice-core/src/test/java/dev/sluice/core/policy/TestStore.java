package dev.sluice.core.policy;

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
 * A memory store seen through a different face: one whose checks throw, or one that answers
 * only when the test says so (as Redis answers after a round trip).
 */
class TestStore implements Store {

  private final Store memory;
  private final boolean remote;
  private final RuntimeException failure;
  final ArrayDeque<Runnable> replies = new ArrayDeque<>();

  private TestStore(Store memory, boolean remote, RuntimeException failure) {
    this.memory = memory;
    this.remote = remote;
    this.failure = failure;
  }

  static TestStore throwing(Store memory, RuntimeException failure) {
    return new TestStore(memory, false, failure);
  }

  static TestStore remote(Store memory) {
    return new TestStore(memory, true, null);
  }

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    if (failure != null) {
      throw failure;
    }
    if (remote) {
      throw new AssertionError("waited on a remote store");
    }
    memory.evaluate(rules, identity, cost, out);
  }

  @Override
  public CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity, long cost,
      Verdicts out) {
    if (!remote) {
      return Store.super.evaluateAsync(rules, identity, cost, out);
    }
    CompletableFuture<Verdicts> f = new CompletableFuture<>();
    replies.add(() -> {
      memory.evaluate(rules, identity, cost, out);
      f.complete(out);
    });
    return f;
  }

  @Override
  public boolean isLocal() {
    return !remote;
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    return memory.acquire(key, max, ttlNanos);
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
