package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory store: a concurrent map from key to a small array of longs, each key guarded by
 * its own monitor. A check over several keys locks them in key order, so checks never deadlock
 * and no lock is global.
 *
 * <p>After 50,000 new keys (fewer for a small cap) one thread drops every fresh state, as seed 000
 * sweeps full buckets past 50,000 keys, so idle keys do not wait for the cap; the next such sweep
 * waits for as many new keys as half the map holds, so the cost per new key stays constant.
 *
 * <p>Memory is bounded by {@code maxKeys}. When a new key would pass the cap, one thread sweeps:
 * first it drops every fresh state (full bucket, expired window, zero score, expired ban, which
 * decides exactly like an absent key, so no decision changes); if the map is still above 90% of the
 * cap it drops states that are not currently refusing (their callers regain some allowance, the
 * documented cost of a key flood). A key that is over its limit or banned is never dropped. If
 * the cap is full of such keys, new keys of a rule share one overflow bucket per rule (room for up
 * to 64 of them is kept inside the cap; past that, one bucket shared by all), so a flood of fresh
 * keys cannot grow memory or escape limiting. After a sweep that left the map full, the
 * next one waits until a tenth of the cap in new keys has arrived, so a full map costs O(1) per
 * new key on average.
 */
final class MemoryStore implements Store {

  private static final ThreadLocal<Algorithm.Probe> PROBE =
      ThreadLocal.withInitial(Algorithm.Probe::new);
  private static final Comparator<Slot> KEY_ORDER = Comparator.comparing(s -> s.key);
  private static final AtomicLong LEASE_IDS = new AtomicLong();

  private final Ticker ticker;
  private final long origin;
  private final int maxKeys;
  private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Leases> leases = new ConcurrentHashMap<>();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  /** New keys that found the map full; a sweep that freed too little waits for more of them. */
  private final AtomicLong fullMisses = new AtomicLong();
  private volatile long nextSweepAt;
  /** Room kept for the per-rule overflow buckets. */
  private final int overflowReserve;
  /** Shared by every rule once even the overflow reserve is used up; never in the map. */
  private final Slot lastResort = new Slot("~overflow");
  /** Fresh state is also swept every this many new keys, so idle keys go long before the cap. */
  private final long freshSweepEvery;
  private final AtomicLong newKeys = new AtomicLong();
  private volatile long nextFreshSweep;

  MemoryStore(Ticker ticker, int maxKeys) {
    this.ticker = Checks.notNull(ticker, "ticker");
    this.maxKeys = (int) Checks.positive(maxKeys, "maxKeys");
    this.origin = ticker.read();
    this.overflowReserve = Math.max(1, Math.min(64, maxKeys / 10));
    this.freshSweepEvery = Math.max(1024, Math.min(50_000, maxKeys / 2));
    this.nextFreshSweep = freshSweepEvery;
  }

  /** Time on the store's timeline: nanoseconds since the store was created. */
  private long now() {
    return ticker.read() - origin;
  }

  /** Per-key state. Guarded by its own monitor; {@code dead} once removed from the map. */
  static final class Slot {
    final String key;
    Object owner;
    long[] state;
    boolean dead;

    Slot(String key) {
      this.key = key;
    }
  }

  @Override
  public List<Verdict> evaluate(List<Rule> rules, List<String> keys, long cost) {
    int n = rules.size();
    if (n != keys.size()) {
      throw new IllegalArgumentException("keys : " + keys.size() + " (expected: " + n + ")");
    }
    if (n == 1) {
      return List.of(evaluate(rules.get(0), keys.get(0), cost));
    }
    long now = now();
    while (true) {
      Slot[] held = new Slot[n];
      for (int i = 0; i < n; i++) {
        held[i] = slot(keys.get(i), rules.get(i), now);
      }
      Slot[] order = held.clone();
      Arrays.sort(order, KEY_ORDER);
      Verdict[] verdicts = lockAll(order, 0, rules, held, now, cost);
      if (verdicts != null) {
        return Arrays.asList(verdicts);
      }
    }
  }

  @Override
  public Verdict evaluate(Rule rule, String key, long cost) {
    long now = now();
    while (true) {
      Slot slot = slot(key, rule, now);
      synchronized (slot) {
        if (!slot.dead) {
          long[] s = stateOf(slot, rule, now);
          Verdict verdict = test(rule, s, now, cost, PROBE.get());
          if (verdict.allowed()) {
            commit(rule, s, now, cost);
            return verdict;
          }
          return rule.mode() == Mode.ENFORCE ? banIfDue(rule, s, now, verdict) : verdict;
        }
      }
    }
  }

  private static void commit(Rule rule, long[] s, long now, long cost) {
    int off = 0;
    for (Limit limit : rule.limits()) {
      limit.algorithm().commit(s, off, now, cost);
      off += limit.algorithm().stateSize();
    }
  }

  /** Starts the rule's ban on a refusal by a limit of an enforcing check. */
  private static Verdict banIfDue(Rule rule, long[] s, long now, Verdict v) {
    if (v.banned() || rule.banNanos() == 0) {
      return v;
    }
    s[s.length - 1] = now + rule.banNanos();
    return Verdict.refused(v.limitIndex(), v.remaining(), Math.max(v.resetNanos(),
        rule.banNanos()), rule.banNanos(), v.score(), true);
  }

  private Verdict[] lockAll(Slot[] order, int i, List<Rule> rules, Slot[] held, long now,
      long cost) {
    if (i == order.length) {
      for (Slot slot : order) {
        if (slot.dead) {
          return null;
        }
      }
      return decide(rules, held, now, cost);
    }
    synchronized (order[i]) {
      return lockAll(order, i + 1, rules, held, now, cost);
    }
  }

  /** Runs the check with every slot locked. */
  private Verdict[] decide(List<Rule> rules, Slot[] held, long now, long cost) {
    Algorithm.Probe probe = PROBE.get();
    int n = held.length;
    Verdict[] out = new Verdict[n];
    boolean enforcedPass = true;
    for (int i = 0; i < n; i++) {
      Rule rule = rules.get(i);
      long[] s = stateOf(held[i], rule, now);
      out[i] = test(rule, s, now, cost, probe);
      if (!out[i].allowed() && rule.mode() == Mode.ENFORCE) {
        enforcedPass = false;
      }
    }
    for (int i = 0; i < n; i++) {
      Rule rule = rules.get(i);
      long[] s = held[i].state;
      if (enforcedPass && out[i].allowed()) {
        commit(rule, s, now, cost);
      } else if (!enforcedPass && !out[i].allowed() && rule.mode() == Mode.ENFORCE) {
        out[i] = banIfDue(rule, s, now, out[i]);
      }
    }
    return out;
  }

  private static Verdict test(Rule rule, long[] s, long now, long cost, Algorithm.Probe probe) {
    if (rule.banNanos() > 0 && s[s.length - 1] - now > 0) {
      return Verdict.banned(s[s.length - 1] - now);
    }
    List<Limit> limits = rule.limits();
    int off = 0;
    int refused = -1;
    int binding = -1;
    long remaining = 0;
    long reset = 0;
    long retry = 0;
    double score = Double.NaN;
    for (int j = 0; j < limits.size(); j++) {
      Limit limit = limits.get(j);
      Algorithm algorithm = limit.algorithm();
      probe.clear();
      boolean ok = algorithm.test(s, off, now, cost, probe);
      off += algorithm.stateSize();
      if (!ok && (refused < 0 || probe.retryAfterNanos > retry)) {
        refused = j;
        remaining = probe.remaining;
        reset = probe.resetNanos;
        retry = probe.retryAfterNanos;
        score = probe.score;
      } else if (ok && refused < 0 && (binding < 0 || probe.remaining < remaining)) {
        binding = j;
        remaining = probe.remaining;
        reset = probe.resetNanos;
        score = probe.score;
      }
    }
    return refused >= 0
        ? Verdict.refused(refused, remaining, reset, retry, score, false)
        : Verdict.allowed(binding, remaining, reset, score);
  }

  /** The slot's state for {@code owner}, reset when the owner's layout changed (a reload). */
  private static long[] stateOf(Slot slot, Rule rule, long now) {
    if (slot.owner != rule) {
      if (!(slot.owner instanceof Rule old) || !old.layout().equals(rule.layout())) {
        slot.state = freshState(rule, now);
      }
      slot.owner = rule;
    }
    return slot.state;
  }

  private static long[] freshState(Rule rule, long now) {
    long[] s = new long[rule.stateSize()];
    int off = 0;
    for (Limit limit : rule.limits()) {
      limit.algorithm().init(s, off, now);
      off += limit.algorithm().stateSize();
    }
    if (rule.banNanos() > 0) {
      s[s.length - 1] = now;
    }
    return s;
  }

  private Slot slot(String key, Object owner, long now) {
    Slot slot = slots.get(key);
    if (slot != null) {
      return slot;
    }
    if (slots.size() >= maxKeys - overflowReserve) {
      if (fullMisses.incrementAndGet() >= nextSweepAt) {
        sweep(now, true);
      }
      if (slots.size() >= maxKeys - overflowReserve) {
        String name = owner instanceof Rule r ? r.name() : ((Cooldown) owner).name();
        key = KeyTemplate.escape(name) + ":~overflow";
        slot = slots.get(key);
        if (slot != null) {
          return slot;
        }
        if (slots.size() >= maxKeys) {
          return lastResort;
        }
      }
    }
    if (newKeys.incrementAndGet() >= nextFreshSweep) {
      sweep(now, false);
    }
    Slot created = new Slot(key);
    Slot raced = slots.putIfAbsent(key, created);
    return raced != null ? raced : created;
  }

  /** Drops fresh state, then (when {@code full}) idle state, as the class comment describes. */
  private void sweep(long now, boolean full) {
    if (!sweeping.compareAndSet(false, true)) {
      return;
    }
    try {
      for (Slot slot : slots.values()) {
        synchronized (slot) {
          if (slot.state == null || isFresh(slot, now)) {
            remove(slot);
          }
        }
      }
      // The next fresh sweep waits for as many new keys as half the map holds, so sweeps cost
      // O(1) per new key however large the map grows.
      nextFreshSweep = newKeys.get() + Math.max(freshSweepEvery, slots.size() / 2);
      if (!full) {
        return;
      }
      int target = maxKeys - maxKeys / 10;
      if (slots.size() > target) {
        for (Slot slot : slots.values()) {
          if (slots.size() <= target) {
            break;
          }
          synchronized (slot) {
            if (!isRefusing(slot, now)) {
              remove(slot);
            }
          }
        }
      }
      // Still full means the map is held by refusing keys. Sweeping again on every new key
      // would cost O(maxKeys) each; wait for a tenth of the cap in new keys (or freed space).
      nextSweepAt = fullMisses.get() + Math.max(1, maxKeys / 10);
    } finally {
      sweeping.set(false);
    }
  }

  private void remove(Slot slot) {
    slot.dead = true;
    slots.remove(slot.key, slot);
  }

  private static boolean isFresh(Slot slot, long now) {
    long[] s = slot.state;
    if (slot.owner instanceof Cooldown c) {
      return c.isFresh(s, now);
    }
    Rule rule = (Rule) slot.owner;
    if (rule.banNanos() > 0 && s[s.length - 1] - now > 0) {
      return false;
    }
    int off = 0;
    for (Limit limit : rule.limits()) {
      if (!limit.algorithm().isFresh(s, off, now)) {
        return false;
      }
      off += limit.algorithm().stateSize();
    }
    return true;
  }

  private static boolean isRefusing(Slot slot, long now) {
    if (slot.state == null) {
      return false;
    }
    if (slot.owner instanceof Cooldown c) {
      return !c.apply(slot.state.clone(), now, Cooldown.Event.CHECK).allowed();
    }
    return !test((Rule) slot.owner, slot.state, now, 1, PROBE.get()).allowed();
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    long now = now();
    while (true) {
      Slot slot = slot(key, policy, now);
      synchronized (slot) {
        if (slot.dead) {
          continue;
        }
        if (slot.owner != policy) {
          if (!(slot.owner instanceof Cooldown) || slot.state == null) {
            slot.state = new long[Cooldown.STATE_SIZE];
            policy.init(slot.state, now);
          }
          slot.owner = policy;
        }
        return policy.apply(slot.state, now, event);
      }
    }
  }

  /** Unexpired leases of one key. Mutated only inside {@link ConcurrentHashMap#compute}. */
  static final class Leases {
    long[] ids = new long[4];
    long[] expiries = new long[4];
    int size;

    void prune(long now) {
      int kept = 0;
      for (int i = 0; i < size; i++) {
        if (expiries[i] - now > 0) {
          ids[kept] = ids[i];
          expiries[kept] = expiries[i];
          kept++;
        }
      }
      size = kept;
    }

    int indexOf(long id) {
      for (int i = 0; i < size; i++) {
        if (ids[i] == id) {
          return i;
        }
      }
      return -1;
    }
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    long now = now();
    long[] granted = new long[1];
    leases.compute(key, (k, l) -> {
      Leases held = l == null ? new Leases() : l;
      held.prune(now);
      if (held.size < max) {
        if (held.size == held.ids.length) {
          held.ids = Arrays.copyOf(held.ids, held.size * 2);
          held.expiries = Arrays.copyOf(held.expiries, held.size * 2);
        }
        granted[0] = LEASE_IDS.incrementAndGet();
        held.ids[held.size] = granted[0];
        held.expiries[held.size] = now + ttlNanos;
        held.size++;
      }
      return held.size == 0 ? null : held;
    });
    return granted[0];
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    long now = now();
    boolean[] renewed = new boolean[1];
    leases.computeIfPresent(key, (k, held) -> {
      held.prune(now);
      int i = held.indexOf(lease);
      if (i >= 0) {
        held.expiries[i] = now + ttlNanos;
        renewed[0] = true;
      }
      return held.size == 0 ? null : held;
    });
    return renewed[0];
  }

  @Override
  public void release(String key, long lease) {
    long now = now();
    leases.computeIfPresent(key, (k, held) -> {
      int i = held.indexOf(lease);
      if (i >= 0) {
        held.size--;
        held.ids[i] = held.ids[held.size];
        held.expiries[i] = held.expiries[held.size];
      }
      held.prune(now);
      return held.size == 0 ? null : held;
    });
  }

  @Override
  public int leases(String key) {
    long now = now();
    int[] count = new int[1];
    leases.computeIfPresent(key, (k, held) -> {
      held.prune(now);
      count[0] = held.size;
      return held.size == 0 ? null : held;
    });
    return count[0];
  }

  @Override
  public long size() {
    return slots.size() + leases.size();
  }

  @Override
  public String toString() {
    return "memory(maxKeys=" + maxKeys + ")";
  }
}
