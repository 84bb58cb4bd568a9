package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/** Folds a store's verdicts into one {@link Decision}; turns store failures into outcomes. */
final class DefaultRateLimiter implements RateLimiter {

  /** The buffer of the allocating entry points, one per thread. */
  private static final ThreadLocal<MutableDecision> SCRATCH =
      ThreadLocal.withInitial(MutableDecision::new);

  private final Store store;

  DefaultRateLimiter(Store store) {
    this.store = Checks.notNull(store, "store");
  }

  @Override
  public Store store() {
    return store;
  }

  @Override
  public Decision check(Rule rule, Identity identity) {
    MutableDecision d = SCRATCH.get();
    check(rule, identity, 1, d);
    return d.snapshot();
  }

  @Override
  public Decision check(List<Rule> rules, Identity identity, long cost) {
    MutableDecision d = SCRATCH.get();
    check(rules, identity, cost, d);
    return d.snapshot();
  }

  @Override
  public boolean check(Rule rule, Identity identity, long cost, MutableDecision into) {
    if (rule.oneLong() && rule.mode() != Mode.OFF && store instanceof MemoryStore memory) {
      Checks.positive(cost, "cost");
      if (cost > rule.minCapacity()) {
        throw tooCostly(rule, cost);
      }
      memory.checkTokenBucket(rule, identity, cost, into);
      return into.allowed();
    }
    return check(rule.asList(), identity, cost, into);
  }

  @Override
  public boolean check(List<Rule> rules, Identity identity, long cost, MutableDecision into) {
    List<Rule> active = active(rules, cost);
    if (active.isEmpty()) {
      into.setUnlimited();
      return true;
    }
    Verdicts v = into.verdicts;
    try {
      store.evaluate(active, identity, cost, v);
    } catch (RuntimeException e) {
      into.storeFailed(active);
      return into.allowed();
    }
    into.refusedMask = mask(rules, active, into.fold(active, v));
    return into.allowed();
  }

  @Override
  public CompletionStage<Decision> checkAsync(List<Rule> rules, Identity identity, long cost) {
    if (store.isLocal()) {
      return CompletableFuture.completedFuture(check(rules, identity, cost));
    }
    List<Rule> active = active(rules, cost);
    if (active.isEmpty()) {
      return CompletableFuture.completedFuture(Decision.unlimited());
    }
    MutableDecision into = new MutableDecision();
    CompletionStage<Verdicts> stage;
    try {
      stage = store.evaluateAsync(active, identity, cost, into.verdicts);
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.handle((v, e) -> {
      if (e != null) {
        into.storeFailed(active);
      } else {
        into.refusedMask = mask(rules, active, into.fold(active, v));
      }
      return into.snapshot();
    });
  }

  /** The rules not in mode OFF, after checking that {@code cost} fits each of them. */
  private static List<Rule> active(List<Rule> rules, long cost) {
    Checks.positive(cost, "cost");
    boolean off = false;
    // Indexed: an iterator is allocated wherever the JIT sees several list classes here.
    for (int i = 0, n = rules.size(); i < n; i++) {
      Rule rule = rules.get(i);
      if (cost > rule.minCapacity()) {
        throw tooCostly(rule, cost);
      }
      off |= rule.mode() == Mode.OFF;
    }
    if (!off) {
      return rules;
    }
    List<Rule> active = new ArrayList<>(rules.size());
    for (Rule rule : rules) {
      if (rule.mode() != Mode.OFF) {
        active.add(rule);
      }
    }
    return active;
  }

  private static IllegalArgumentException tooCostly(Rule rule, long cost) {
    for (Limit limit : rule.limits()) {
      if (cost > limit.capacity()) {
        return Checks.invalid("cost", cost, "<= " + limit.capacity()
            + ", the capacity of limit '" + limit.name() + "' in rule '" + rule.name() + "'");
      }
    }
    throw new AssertionError(rule);
  }

  /** The refusal mask of {@code active} mapped back to indices of {@code rules}. */
  private static long mask(List<Rule> rules, List<Rule> active, long activeMask) {
    if (rules == active) {
      return activeMask;
    }
    long mask = 0;
    for (int i = 0, j = 0; i < rules.size() && i < 64; i++) {
      if (rules.get(i).mode() != Mode.OFF) {
        if ((activeMask & (1L << j)) != 0) {
          mask |= 1L << i;
        }
        j++;
      }
    }
    return mask;
  }

  @Override
  public Optional<Lease> acquire(ConcurrencyLimit limit, Identity identity) {
    String key = limit.keyFor(identity);
    long id;
    try {
      id = store.acquire(key, limit.max(), limit.leaseTtlNanos());
    } catch (RuntimeException e) {
      return failedLease(limit, key);
    }
    return lease(limit, key, id);
  }

  @Override
  public CompletionStage<Optional<Lease>> acquireAsync(ConcurrencyLimit limit,
      Identity identity) {
    String key = limit.keyFor(identity);
    CompletionStage<Long> stage;
    try {
      stage = store.acquireAsync(key, limit.max(), limit.leaseTtlNanos());
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(failedLease(limit, key));
    }
    return stage.handle((id, e) -> e != null ? failedLease(limit, key) : lease(limit, key, id));
  }

  private Optional<Lease> lease(ConcurrencyLimit limit, String key, long id) {
    return id == 0 ? Optional.empty()
        : Optional.of(new StoreLease(key, id, limit.leaseTtlNanos(), false));
  }

  private Optional<Lease> failedLease(ConcurrencyLimit limit, String key) {
    return limit.onStoreError() == OnStoreError.ALLOW
        ? Optional.of(new StoreLease(key, 0, limit.leaseTtlNanos(), true))
        : Optional.empty();
  }

  @Override
  public Decision cooldown(Cooldown cooldown, Identity identity, Cooldown.Event event) {
    MutableDecision d = new MutableDecision();
    try {
      d.cooldown(cooldown, store.cooldown(cooldown.keyFor(identity), cooldown, event));
    } catch (RuntimeException e) {
      d.cooldownFailed(cooldown);
    }
    return d.snapshot();
  }

  @Override
  public CompletionStage<Decision> cooldownAsync(Cooldown cooldown, Identity identity,
      Cooldown.Event event) {
    MutableDecision d = new MutableDecision();
    CompletionStage<Verdict> stage;
    try {
      stage = store.cooldownAsync(cooldown.keyFor(identity), cooldown, event);
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.handle((v, e) -> {
      if (e != null) {
        d.cooldownFailed(cooldown);
      } else {
        d.cooldown(cooldown, v);
      }
      return d.snapshot();
    });
  }

  private final class StoreLease implements Lease {
    private final String key;
    private final long id;
    private final long ttl;
    private final boolean degraded;
    private final AtomicBoolean closed = new AtomicBoolean();

    StoreLease(String key, long id, long ttl, boolean degraded) {
      this.key = key;
      this.id = id;
      this.ttl = ttl;
      this.degraded = degraded;
    }

    @Override
    public boolean renew() {
      if (degraded || closed.get()) {
        return degraded;
      }
      try {
        return store.renew(key, id, ttl);
      } catch (RuntimeException e) {
        return true;
      }
    }

    @Override
    public CompletionStage<Boolean> renewAsync() {
      if (degraded || closed.get()) {
        return CompletableFuture.completedFuture(degraded);
      }
      try {
        return store.renewAsync(key, id, ttl).exceptionally(e -> true);
      } catch (RuntimeException e) {
        return CompletableFuture.completedFuture(true);
      }
    }

    @Override
    public boolean degraded() {
      return degraded;
    }

    @Override
    public void close() {
      if (!degraded && closed.compareAndSet(false, true)) {
        try {
          store.releaseAsync(key, id);
        } catch (RuntimeException e) {
          // The lease expires on its own after its time-to-live.
        }
      }
    }
  }
}
