package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/** Folds a store's verdicts into one {@link Decision}; turns store failures into outcomes. */
final class DefaultRateLimiter implements RateLimiter {

  private static final long DEGRADED_RETRY_NANOS = 1_000_000_000L;

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
    if (rule.mode() == Mode.OFF) {
      return Decision.unlimited();
    }
    String key = rule.keyFor(identity);
    Verdict v;
    try {
      v = store.evaluate(rule, key, 1);
    } catch (RuntimeException e) {
      return degraded(List.of(rule));
    }
    boolean shadowRefused = !v.allowed() && rule.mode() == Mode.SHADOW;
    return decision(rule, v, v.allowed() || shadowRefused, shadowRefused ? rule.name() : null)
        .withRefusedMask(v.allowed() ? 0 : 1);
  }

  @Override
  public Decision check(List<Rule> rules, Identity identity, long cost) {
    Checks.positive(cost, "cost");
    List<Rule> active = rules;
    for (Rule rule : rules) {
      if (rule.mode() == Mode.OFF) {
        active = withoutOff(rules);
        break;
      }
    }
    if (active.isEmpty()) {
      return Decision.unlimited();
    }
    List<String> keys = new ArrayList<>(active.size());
    for (Rule rule : active) {
      checkCost(rule, cost);
      keys.add(rule.keyFor(identity));
    }
    List<Verdict> verdicts;
    try {
      verdicts = store.evaluate(active, keys, cost);
    } catch (RuntimeException e) {
      return degraded(active);
    }
    Decision d = fold(active, verdicts);
    long mask = 0;
    for (int i = 0, j = 0; i < rules.size() && i < 64; i++) {
      if (rules.get(i).mode() != Mode.OFF) {
        if (!verdicts.get(j++).allowed()) {
          mask |= 1L << i;
        }
      }
    }
    return d.withRefusedMask(mask);
  }

  private static List<Rule> withoutOff(List<Rule> rules) {
    List<Rule> active = new ArrayList<>(rules.size());
    for (Rule rule : rules) {
      if (rule.mode() != Mode.OFF) {
        active.add(rule);
      }
    }
    return active;
  }

  private static void checkCost(Rule rule, long cost) {
    for (Limit limit : rule.limits()) {
      if (cost > limit.capacity()) {
        throw Checks.invalid("cost", cost, "<= " + limit.capacity()
            + ", the capacity of limit '" + limit.name() + "' in rule '" + rule.name() + "'");
      }
    }
  }

  private static Decision fold(List<Rule> rules, List<Verdict> verdicts) {
    int refused = -1;
    int binding = -1;
    int shadow = -1;
    for (int i = 0; i < rules.size(); i++) {
      Verdict v = verdicts.get(i);
      Rule rule = rules.get(i);
      if (rule.mode() == Mode.SHADOW) {
        if (!v.allowed() && shadow < 0) {
          shadow = i;
        }
      } else if (!v.allowed()) {
        if (refused < 0 || v.retryAfterNanos() > verdicts.get(refused).retryAfterNanos()) {
          refused = i;
        }
      } else if (binding < 0 || v.remaining() < verdicts.get(binding).remaining()) {
        binding = i;
      }
    }
    String shadowRule = shadow < 0 ? null : rules.get(shadow).name();
    int decider = refused >= 0 ? refused : binding >= 0 ? binding : shadow >= 0 ? shadow : 0;
    return decision(rules.get(decider), verdicts.get(decider), refused < 0, shadowRule);
  }

  /** The decision reporting {@code v} of {@code rule}, the deciding rule of the check. */
  private static Decision decision(Rule rule, Verdict v, boolean allowed, String shadowRule) {
    if (v.banned() && !v.banApplied()) {
      return new Decision(allowed, rule.name(), null, -1, 0, v.resetNanos(),
          allowed ? 0 : v.retryAfterNanos(), rule.banNanos(), true, false, Double.NaN,
          Double.NaN, shadowRule, v.degraded());
    }
    Limit limit = rule.limits().get(v.limitIndex());
    boolean scored = limit.kind() == Limit.Kind.SCORE && (!v.allowed() || !allowed);
    return new Decision(allowed, rule.name(), limit.name(), limit.capacity(), v.remaining(),
        v.resetNanos(), allowed ? 0 : v.retryAfterNanos(), limit.windowNanos(),
        v.banApplied() && !allowed, v.banApplied() && !allowed,
        scored ? v.score() : Double.NaN, scored ? limit.maxScore() : Double.NaN, shadowRule,
        v.degraded());
  }

  private static Decision degraded(List<Rule> rules) {
    for (Rule rule : rules) {
      if (rule.mode() == Mode.ENFORCE && rule.onStoreError() == OnStoreError.DENY) {
        return new Decision(false, rule.name(), null, -1, 0, DEGRADED_RETRY_NANOS,
            DEGRADED_RETRY_NANOS, 0, false, false, Double.NaN, Double.NaN, null, true);
      }
    }
    return new Decision(true, rules.get(0).name(), null, -1, -1, 0, 0, 0, false, false,
        Double.NaN, Double.NaN, null, true);
  }

  @Override
  public Optional<Lease> acquire(ConcurrencyLimit limit, Identity identity) {
    String key = limit.keyFor(identity);
    long id;
    try {
      id = store.acquire(key, limit.max(), limit.leaseTtlNanos());
    } catch (RuntimeException e) {
      return limit.onStoreError() == OnStoreError.ALLOW
          ? Optional.of(new StoreLease(key, 0, limit.leaseTtlNanos(), true))
          : Optional.empty();
    }
    return id == 0 ? Optional.empty()
        : Optional.of(new StoreLease(key, id, limit.leaseTtlNanos(), false));
  }

  @Override
  public Decision cooldown(Cooldown cooldown, Identity identity, Cooldown.Event event) {
    Verdict v;
    try {
      v = store.cooldown(cooldown.keyFor(identity), cooldown, event);
    } catch (RuntimeException e) {
      return new Decision(true, cooldown.name(), null, -1, -1, 0, 0, 0, false, false,
          Double.NaN, Double.NaN, null, true);
    }
    return new Decision(v.allowed(), cooldown.name(), cooldown.name(), cooldown.maxRetries(),
        v.remaining(), v.resetNanos(), v.retryAfterNanos(), cooldown.retryWindow().toNanos(),
        v.banned(), v.banApplied(), Double.NaN, Double.NaN, null, v.degraded());
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
    public boolean degraded() {
      return degraded;
    }

    @Override
    public void close() {
      if (!degraded && closed.compareAndSet(false, true)) {
        try {
          store.release(key, id);
        } catch (RuntimeException e) {
          // The lease expires on its own after its time-to-live.
        }
      }
    }
  }
}
