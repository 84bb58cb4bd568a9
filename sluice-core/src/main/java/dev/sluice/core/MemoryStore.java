package dev.sluice.core;

import dev.sluice.core.MemoryChecks.Entry;
import dev.sluice.core.MemoryChecks.Scratch;
import dev.sluice.core.MemoryTable.Segment;
import dev.sluice.core.internal.Checks;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory store: per state layout, a {@link MemoryTable} of 128-bit hashed keys
 * ({@link KeyHash}) with state inline. A one-rule token-bucket check is one lock-free
 * compare-and-set and allocates nothing; other checks hold their keys' guard words, taken in one
 * global order, so checks over several keys never deadlock and no lock is global.
 *
 * <p>After 50,000 new keys (fewer for a small cap) one thread drops every fresh state, as seed 000
 * sweeps full buckets past 50,000 keys, so idle keys do not wait for the cap; the next such sweep
 * waits for as many new keys as half the store holds, so the cost per new key stays constant.
 *
 * <p>Memory is bounded by {@code maxKeys}. When a new key would pass the cap, one thread sweeps:
 * first it drops every fresh state (full bucket, expired window, zero score, expired ban, which
 * decides exactly like an absent key, so no decision changes); if the store is still above 90%
 * of the cap it drops states that are not currently refusing (their callers regain some
 * allowance, the documented cost of a key flood). A key that is over its limit or banned is never
 * dropped. If the cap is full of such keys, new keys of a rule share one overflow bucket per rule
 * (room for up to 64 of them is kept inside the cap; past that, one bucket per state layout
 * shared by all), so a flood of fresh keys cannot grow memory or escape limiting. After a sweep
 * that left the store full, the next one waits until a tenth of the cap in new keys has arrived,
 * so a full store costs O(1) per new key on average. Concurrent inserts may pass the cap by at
 * most one key per inserting thread.
 */
final class MemoryStore implements Store {

  /** The key of the bucket of a cooldown's string keys. */
  private static final long[] COOLDOWN_SEEDS = KeyHash.seeds("~cooldown");

  private final Ticker ticker;
  private final long origin;
  private final int maxKeys;
  private final int segments;
  private final ConcurrentHashMap<String, MemoryTable> tables = new ConcurrentHashMap<>();
  private final AtomicInteger tableIds = new AtomicInteger();
  private final MemoryLeases leases = new MemoryLeases();
  /** Reservations of rules counted on responses, by the rule's key. */
  private final MemoryLeases reservations = new MemoryLeases();
  /** Per rule name, so a reload keeps them: the keys refused lately (see RecentRefusals). */
  private final ConcurrentHashMap<String, RecentRefusals> refused = new ConcurrentHashMap<>();
  private final MemoryAdmin admin = new MemoryAdmin(this);
  /** Keys in the tables, the overflow buckets included. */
  private final AtomicLong live = new AtomicLong();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  /** New keys that found the store full; a sweep that freed too little waits for more. */
  private final AtomicLong fullMisses = new AtomicLong();
  private volatile long nextSweepAt;
  /** Room kept for the per-rule overflow buckets. */
  private final int overflowReserve;
  /** Fresh state is also swept every this many new keys, so idle keys go long before the cap. */
  private final long freshSweepEvery;
  /**
   * Keys the sweeps dropped, ever; with {@link #live} it counts the keys ever inserted, so a new
   * key costs one atomic increment (of {@code live}), not two.
   */
  private final AtomicLong dropped = new AtomicLong();
  private volatile long nextFreshSweep;

  MemoryStore(Ticker ticker, int maxKeys) {
    this.ticker = Checks.notNull(ticker, "ticker");
    this.maxKeys = (int) Checks.positive(maxKeys, "maxKeys");
    this.origin = ticker.read();
    this.overflowReserve = Math.max(1, Math.min(64, maxKeys / 10));
    this.freshSweepEvery = Math.max(1024, Math.min(50_000, maxKeys / 2));
    this.nextFreshSweep = freshSweepEvery;
    this.segments = Integer.highestOneBit(Math.max(1, Math.min(256, maxKeys / 4096)));
  }

  /** Time on the store's timeline: nanoseconds since the store was created. */
  long now() {
    return ticker.read() - origin;
  }

  @Override
  public boolean isLocal() {
    return true;
  }

  /** A table cached by the rule that uses it, for the store that made it. */
  private record Binding(MemoryStore store, MemoryTable table, RecentRefusals refused) {}

  /** Stores a rule keeps bindings of at once; past that the oldest gives way. */
  static final int BINDINGS = 4;

  /**
   * The rule's binding to this store, made on first use. A rule keeps the bindings of up to
   * {@value #BINDINGS} stores, newest first: the partitions of a replay share one policy, each
   * with a store of its own, and a single binding, replaced by each store's check in turn, was a
   * shared field written by both threads and a binding made again on every check.
   */
  private Binding binding(Rule rule) {
    Binding b = bound(rule);
    return b != null ? b : bind(rule);
  }

  /** The rule's binding to this store, or null when it has none. */
  private Binding bound(Rule rule) {
    if (rule.memoryBinding instanceof Binding[] bound) {
      for (Binding b : bound) {
        if (b.store == this) {
          return b;
        }
      }
    }
    return null;
  }

  private Binding bind(Rule rule) {
    MemoryTable t = tables.computeIfAbsent(rule.layout(),
        l -> new MemoryTable(tableIds.incrementAndGet(), StateLayout.of(rule), segments, true));
    Binding b = new Binding(this, t, refusals(rule));
    Binding[] old = rule.memoryBinding instanceof Binding[] bound ? bound : new Binding[0];
    Binding[] now = new Binding[Math.min(BINDINGS, old.length + 1)];
    now[0] = b;
    System.arraycopy(old, 0, now, 1, now.length - 1);
    // Two stores binding at once may lose one binding: that store binds again on its next check.
    rule.memoryBinding = now;
    return b;
  }

  MemoryTable table(Rule rule) {
    return binding(rule).table;
  }

  RecentRefusals refusals(Rule rule) {
    Binding b = bound(rule);
    return b != null ? b.refused : refused.computeIfAbsent(rule.name(), n -> new RecentRefusals());
  }

  /** Off the allowed path: notes a refused key for the admin API (two stores, no allocation). */
  private void noteRefused(Rule rule, long ka, Identity identity) {
    refusals(rule).record(ka, identity, now());
  }

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    int n = rules.size();
    out.reset(n);
    Scratch sc = MemoryChecks.scratch(out);
    Entry[] entries = sc.entries(n);
    for (int i = 0; i < n; i++) {
      Rule rule = rules.get(i);
      Entry e = entries[i];
      e.table = table(rule);
      sc.hash.of(rule, identity);
      e.ka = sc.hash.a;
      e.kb = sc.hash.b;
      locate(e, rule, sc.hash);
    }
    if (n == 1) {
      evaluateOne(rules.get(0), entries[0], cost, out, sc.hash);
    } else {
      MemoryChecks.evaluateMany(this, rules, entries, sc, cost, out);
    }
    for (int i = 0; i < n; i++) {
      if (!out.allowed(i)) {
        noteRefused(rules.get(i), entries[i].ka, identity);
      }
    }
  }

  /** Per thread: the prefetch's key hash, the slots it reads, and where the reads go. */
  private static final class Prefetch {
    final KeyHash hash = KeyHash.create();
    long[][] slots = new long[32][];
    int[] at = new int[32];
    long sink;
  }

  private static final ThreadLocal<Prefetch> PREFETCH = ThreadLocal.withInitial(Prefetch::new);

  /**
   * Finds every key's home slot first (hashing only, no miss), then reads the first word of each
   * in one tight loop, so the CPU has all the misses in flight at once; the sum of the reads is
   * kept so the JIT keeps them. No insert, no sweep, no lock, no write to the tables; a rule
   * whose table does not exist yet is skipped, so the hint makes no table either.
   */
  @Override
  public void prefetch(List<Rule>[] rules, Identity[] identities, int count) {
    Prefetch p = PREFETCH.get();
    int m = 0;
    for (int i = 0; i < count; i++) {
      List<Rule> list = rules[i];
      for (int j = 0, n = list.size(); j < n; j++) {
        Rule rule = list.get(j);
        Binding b = bound(rule);
        MemoryTable t = b != null ? b.table : tables.get(rule.layout());
        if (t == null) {
          continue;
        }
        p.hash.of(rule, identities[i]);
        MemoryTable.Arrays arrays = t.segment(p.hash.a).arrays;
        if (m == p.at.length) {
          p.slots = java.util.Arrays.copyOf(p.slots, m * 2);
          p.at = java.util.Arrays.copyOf(p.at, m * 2);
        }
        p.slots[m] = arrays.slots;
        p.at[m] = t.homeBase(arrays, p.hash.b);
        m++;
      }
    }
    long sink = p.sink;
    for (int k = 0; k < m; k++) {
      long[] slots = p.slots[k];
      int at = p.at[k];
      // The home slot's line and the next: a slot of more than one long may cross into it, and
      // a new key's probe for an empty slot goes on there.
      sink += slots[at] + slots[Math.min(at + 8, slots.length - 1)];
    }
    p.sink = sink;
    // Holds no table's arrays past the call: a resize must be able to free them.
    java.util.Arrays.fill(p.slots, 0, m, null);
  }

  /**
   * The fast path of a one-rule check of a lone token bucket: one compare-and-set, the outcome
   * written straight into {@code into}, no verdict buffer and no fold.
   */
  void checkTokenBucket(Rule rule, Identity identity, long cost, MutableDecision into) {
    Scratch sc = MemoryChecks.scratch(into.verdicts);
    Entry e = sc.entries[0];
    e.table = table(rule);
    KeyHash hash = sc.hash;
    hash.of(rule, identity);
    e.ka = hash.a;
    e.kb = hash.b;
    locate(e, rule, hash);
    Algorithm.Probe probe = into.verdicts.probe;
    boolean allowed = decideByCas(rule, e, cost, probe, hash);
    if (!allowed) {
      noteRefused(rule, e.ka, identity);
    }
    into.tokenBucket(rule, allowed, probe.remaining, probe.resetNanos,
        allowed ? 0 : probe.retryAfterNanos);
  }

  /**
   * Decides a one-long state by compare-and-set: tests it, and commits unless refused; true if
   * allowed, with the figures in {@code probe} either way. A refusal writes nothing.
   */
  private boolean decideByCas(Rule rule, Entry e, long cost, Algorithm.Probe probe,
      KeyHash hash) {
    Algorithm a = rule.algorithms()[0];
    long[] cell = e.cell;
    for (int spins = 0; ; spins++) {
      long v = MemoryTable.getVolatile(e.slots, e.base + 2);
      if (v == MemoryTable.DEAD) {
        locate(e, rule, hash);
        continue;
      }
      if (v == MemoryTable.LOCKED) {
        MemoryTable.backOff(spins);
        continue;
      }
      // Read after the state: never older than the instant the state was written at.
      long now = now();
      cell[0] = v;
      probe.clear();
      if (!a.test(cell, 0, now, cost, probe)) {
        return false;
      }
      a.commit(cell, 0, now, cost);
      if (MemoryTable.cas(e.slots, e.base + 2, v, cell[0])) {
        return true;
      }
    }
  }

  private void evaluateOne(Rule rule, Entry e, long cost, Verdicts out, KeyHash hash) {
    Algorithm.Probe probe = out.probe;
    if (e.table.cas) {
      if (decideByCas(rule, e, cost, probe, hash)) {
        out.allow(0, 0, probe.remaining, probe.resetNanos, probe.score);
      } else {
        out.refuse(0, 0, probe.remaining, probe.resetNanos, probe.retryAfterNanos, probe.score,
            false);
      }
      return;
    }
    while (!MemoryTable.lock(e.slots, e.base)) {
      locate(e, rule, hash);
    }
    try {
      e.bindState();
      long now = now();
      if (MemoryChecks.test(rule, e.state, e.off, now, cost, probe, out, 0)) {
        MemoryChecks.commit(rule, e.state, e.off, now, cost);
      } else if (rule.mode() == Mode.ENFORCE) {
        MemoryChecks.banIfDue(rule, e.state, e.off, now, out, 0);
      }
    } finally {
      MemoryTable.unlock(e.slots, e.base);
    }
  }

  /**
   * Finds the slot of {@code e}'s key, inserting a fresh state when it is absent; when the store
   * is full, the owner's overflow bucket instead. {@code owner} is a Rule or a Cooldown.
   */
  void locate(Entry e, Object owner, KeyHash hash) {
    locate(e, owner, hash, true);
  }

  /**
   * As {@link #locate(Entry, Object, KeyHash)}; without {@code maySweep} a full store sends the
   * key to its overflow bucket without sweeping. A check of several keys relocates them so after
   * one died: a sweep there could drop the fresh key it had just inserted for another of its
   * rules, and with a cap under ten keys (a sweep on every miss) do so for ever.
   */
  void locate(Entry e, Object owner, KeyHash hash, boolean maySweep) {
    MemoryTable t = e.table;
    MemoryTable.Arrays arrays = t.segment(e.ka).arrays;
    int base = t.find(arrays, e.ka, e.kb);
    if (base >= 0) {
      e.at(arrays, base);
      return;
    }
    absent(e, owner, hash, maySweep);
  }

  /** The miss path of {@link #locate}, apart so the lookup stays small enough to inline. */
  private void absent(Entry e, Object owner, KeyHash hash, boolean maySweep) {
    if (live.get() >= maxKeys - overflowReserve) {
      if (maySweep && fullMisses.incrementAndGet() >= nextSweepAt) {
        sweep(now(), true);
      }
      if (live.get() >= maxKeys - overflowReserve) {
        overflow(e, owner, hash);
        return;
      }
    }
    // The key about to be inserted counts: the sweep runs before it, so it cannot drop it.
    if (maySweep && inserted() + 1 >= nextFreshSweep) {
      sweep(now(), false);
    }
    insert(e);
  }

  private void insert(Entry e) {
    MemoryTable t = e.table;
    Segment seg = t.segment(e.ka);
    seg.lock();
    try {
      int base = t.find(seg.arrays, e.ka, e.kb);
      if (base < 0) {
        base = t.insert(seg, e.ka, e.kb, now());
        live.incrementAndGet();
      }
      e.at(seg.arrays, base);
    } finally {
      seg.unlock();
    }
  }

  /** Sends {@code e} to its owner's overflow bucket, or past the reserve to the last resort. */
  private void overflow(Entry e, Object owner, KeyHash hash) {
    if (owner instanceof Rule rule) {
      hash.overflow(rule.seedA(), rule.seedB());
    } else {
      long[] seeds = KeyHash.seeds(((Cooldown) owner).name());
      hash.overflow(seeds[0], seeds[1]);
    }
    e.ka = hash.a;
    e.kb = hash.b;
    MemoryTable t = e.table;
    MemoryTable.Arrays arrays = t.segment(e.ka).arrays;
    int base = t.find(arrays, e.ka, e.kb);
    if (base >= 0) {
      e.at(arrays, base);
    } else if (live.get() < maxKeys) {
      insert(e);
    } else {
      // One key, the same for every rule of the layout, in a segment of its own.
      e.ka = Long.MIN_VALUE;
      e.kb = 0;
      Segment last = t.lastResort;
      last.lock();
      try {
        int at = t.find(last.arrays, e.ka, e.kb);
        if (at < 0) {
          at = t.insert(last, e.ka, e.kb, now()); // may grow the arrays: read them after
        }
        e.at(last.arrays, at);
      } finally {
        last.unlock();
      }
    }
  }

  /** Keys inserted since the store was made (overflow buckets included). */
  private long inserted() {
    return live.get() + dropped.get();
  }

  /** Drops {@code n} keys from the count. */
  private void dropped(long n) {
    if (n > 0) {
      live.addAndGet(-n);
      dropped.addAndGet(n);
    }
  }

  /** Drops fresh state, then (when {@code full}) idle state, as the class comment describes. */
  private void sweep(long now, boolean full) {
    if (!sweeping.compareAndSet(false, true)) {
      return;
    }
    try {
      for (MemoryTable t : tables.values()) {
        for (Segment seg : t.segments()) {
          dropped(MemoryChecks.drop(t, seg, now, false, Long.MAX_VALUE));
        }
      }
      // The next fresh sweep waits for as many new keys as half the store holds, so sweeps cost
      // O(1) per new key however large the store grows.
      nextFreshSweep = inserted() + Math.max(freshSweepEvery, live.get() / 2);
      if (!full) {
        return;
      }
      int target = maxKeys - maxKeys / 10;
      for (MemoryTable t : tables.values()) {
        for (Segment seg : t.segments()) {
          long excess = live.get() - target;
          if (excess <= 0) {
            break;
          }
          dropped(MemoryChecks.drop(t, seg, now, true, excess));
        }
      }
      // Still full means the store is held by refusing keys. Sweeping again on every new key
      // would cost O(maxKeys) each; wait for a tenth of the cap in new keys (or freed space).
      nextSweepAt = fullMisses.get() + Math.max(1, maxKeys / 10);
    } finally {
      sweeping.set(false);
    }
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    Verdict[] out = new Verdict[1];
    onCooldown(key, policy, (s, off, now) -> out[0] = policy.apply(s, now, event));
    return out[0];
  }

  /** Runs {@code edit} on the cooldown state of {@code key} (inserted when absent). */
  private void onCooldown(String key, Cooldown policy, StateEdit edit) {
    MemoryTable t = tables.computeIfAbsent("cooldown:" + policy.layout(),
        l -> new MemoryTable(tableIds.incrementAndGet(), StateLayout.of(policy), segments, false));
    KeyHash hash = KeyHash.create();
    hash.of(COOLDOWN_SEEDS[0], COOLDOWN_SEEDS[1], key);
    onState(t, policy, hash, edit);
  }

  /** Changes one key's state in place; runs again when a one-long state's write raced. */
  interface StateEdit {
    void apply(long[] s, int off, long now);
  }

  /**
   * Runs {@code edit} on the state of the key {@code hash} names in {@code t} (inserted when
   * absent; {@code owner} is its Rule or Cooldown), holding the slot's guard, or by
   * compare-and-set for a one-long state, as a decision would.
   */
  private void onState(MemoryTable t, Object owner, KeyHash hash, StateEdit edit) {
    Entry e = new Entry();
    e.table = t;
    e.ka = hash.a;
    e.kb = hash.b;
    locate(e, owner, hash);
    if (t.cas) {
      for (int spins = 0; ; spins++) {
        long v = MemoryTable.getVolatile(e.slots, e.base + 2);
        if (v == MemoryTable.DEAD) {
          locate(e, owner, hash);
          continue;
        }
        if (v == MemoryTable.LOCKED) {
          MemoryTable.backOff(spins);
          continue;
        }
        e.cell[0] = v;
        edit.apply(e.cell, 0, now());
        if (e.cell[0] == v || MemoryTable.cas(e.slots, e.base + 2, v, e.cell[0])) {
          return;
        }
      }
    }
    while (!MemoryTable.lock(e.slots, e.base)) {
      locate(e, owner, hash);
    }
    try {
      e.bindState();
      edit.apply(e.state, e.off, now());
    } finally {
      MemoryTable.unlock(e.slots, e.base);
    }
  }

  // Reservations of rules counted on responses: the entries of a MemoryLeases of their own, each
  // change made inside the key's entry so that reserving and settling are one step each.

  @Override
  public CompletionStage<Reservation> reserveAsync(Rule rule, Identity identity, long cost,
      long ttlNanos) {
    return MemoryAdmin.now(() -> reserve(rule, identity, cost, ttlNanos));
  }

  private Reservation reserve(Rule rule, Identity identity, long cost, long ttlNanos) {
    Checks.positive(cost, "cost");
    Checks.positive(ttlNanos, "ttl");
    String key = rule.keyFor(identity);
    Verdict[] verdict = new Verdict[1];
    boolean[] inFlight = new boolean[1];
    // A cooldown counts requests (one failure each), a rule of limits their cost.
    long weight = rule.cooldown() != null ? 1 : cost;
    long id = reservations.add(key, weight, ttlNanos, now(), pending -> {
      Verdict v = rule.cooldown() != null ? reserveCooldown(rule.cooldown(), key, pending)
          : reserveLimits(rule, identity, cost, pending, inFlight);
      verdict[0] = v;
      if (rule.cooldown() != null) {
        inFlight[0] = !v.allowed() && !v.banned();
      }
      return v.allowed() && !inFlight[0];
    });
    if (id > 0) {
      return Reservation.held(id, verdict[0]);
    }
    return inFlight[0] ? Reservation.inFlight(verdict[0]) : Reservation.refused(verdict[0]);
  }

  private Verdict reserveCooldown(Cooldown policy, String key, long pending) {
    Verdict[] out = new Verdict[1];
    onCooldown(key, policy, (s, off, now) -> out[0] = policy.reserve(s, now, pending));
    return out[0];
  }

  /**
   * The settled state must allow {@code cost} (a refusal starts an enforcing rule's ban), and
   * {@code cost} plus {@code pending} must pass too, else the refusal is in flight.
   */
  private Verdict reserveLimits(Rule rule, Identity identity, long cost, long pending,
      boolean[] inFlight) {
    Verdicts out = new Verdicts();
    out.reset(1);
    Verdict[] result = new Verdict[1];
    KeyHash hash = KeyHash.create();
    hash.of(rule, identity);
    onState(table(rule), rule, hash, (s, off, now) -> {
      inFlight[0] = false;
      if (!MemoryChecks.test(rule, s, off, now, cost, out.probe, out, 0)) {
        if (rule.mode() == Mode.ENFORCE) {
          MemoryChecks.banIfDue(rule, s, off, now, out, 0);
        }
        result[0] = out.get(0);
        return;
      }
      Verdict allowed = out.get(0);
      if (pending > 0
          && !MemoryChecks.test(rule, s, off, now, cost + pending, out.probe, out, 0)) {
        inFlight[0] = true;
        result[0] = Verdict.refused(out.limitIndex(0), out.remaining(0),
            Math.max(0, out.resetNanos(0)), Reservation.IN_FLIGHT_RETRY_NANOS, out.score(0),
            false);
        return;
      }
      result[0] = allowed;
    });
    if (!result[0].allowed() && !inFlight[0]) {
      noteRefused(rule, hash.a, identity);
    }
    return result[0];
  }

  @Override
  public CompletionStage<Verdict> settleAsync(Rule rule, Identity identity, long id, long cost,
      Reservation.Settlement how) {
    return MemoryAdmin.now(() -> settle(rule, identity, id, cost, how));
  }

  private Verdict settle(Rule rule, Identity identity, long id, long cost,
      Reservation.Settlement how) {
    String key = rule.keyFor(identity);
    Verdict[] out = {Verdict.allowed(0, 0, 0, Double.NaN)};
    reservations.remove(key, id, now(), () -> {
      Cooldown c = rule.cooldown();
      if (c != null) {
        if (how == Reservation.Settlement.FAILURE) {
          out[0] = cooldown(key, c, Cooldown.Event.FAILURE);
        } else if (how == Reservation.Settlement.SUCCESS && rule.resetsOnSuccess(identity)) {
          out[0] = cooldown(key, c, Cooldown.Event.SUCCESS);
        }
      } else if (how == Reservation.Settlement.FAILURE) {
        Verdicts v = new Verdicts();
        evaluate(rule.asList(), identity, cost, v);
        out[0] = v.get(0);
      }
    });
    return out[0];
  }

  /** The reservations' total cost held on {@code rule}'s key of {@code identity}. */
  long reserved(Rule rule, Identity identity) {
    return reservations.weight(rule.keyFor(identity), now());
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    return leases.acquire(key, max, ttlNanos, now());
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    return leases.renew(key, lease, ttlNanos, now());
  }

  @Override
  public void release(String key, long lease) {
    leases.release(key, lease, now());
  }

  @Override
  public int leases(String key) {
    return leases.count(key, now());
  }

  @Override
  public CompletionStage<List<KeyState>> refusedAsync(Rule rule, int limit) {
    return MemoryAdmin.now(() -> admin.refused(rule, limit));
  }

  @Override
  public CompletionStage<KeyState> keyStateAsync(Rule rule, String key) {
    return MemoryAdmin.now(() -> admin.state(rule, key));
  }

  @Override
  public CompletionStage<KeyState> peekAsync(Rule rule, Identity identity) {
    return MemoryAdmin.now(() -> admin.state(rule, identity));
  }

  @Override
  public CompletionStage<Boolean> banAsync(Rule rule, String key, java.time.Duration length) {
    return MemoryAdmin.now(() -> ban(rule, rule.identityOf(key), length));
  }

  /** Sets the key's ban expiry (inserting the key), and notes it as refused for the listings. */
  private boolean ban(Rule rule, Identity identity, java.time.Duration length) {
    if (rule.banNanos() == 0) {
      throw Checks.invalid("rule", "'" + rule.name() + "' has no ban",
          "a rule with a ban: (its state keeps a ban's expiry)");
    }
    long nanos = Checks.duration(length, "duration");
    Entry e = new Entry();
    e.table = table(rule);
    KeyHash hash = KeyHash.create();
    hash.of(rule, identity);
    e.ka = hash.a;
    e.kb = hash.b;
    locate(e, rule, hash);
    while (!MemoryTable.lock(e.slots, e.base)) {
      locate(e, rule, hash);
    }
    try {
      e.bindState();
      e.state[e.off + rule.stateSize() - 1] = now() + nanos;
    } finally {
      MemoryTable.unlock(e.slots, e.base);
    }
    noteRefused(rule, e.ka, identity);
    return true;
  }

  @Override
  public CompletionStage<Boolean> unbanAsync(Rule rule, String key) {
    return MemoryAdmin.now(() -> admin.unban(rule, key));
  }

  @Override
  public CompletionStage<Boolean> resetAsync(Rule rule, String key) {
    return MemoryAdmin.now(() -> admin.reset(rule, key));
  }

  @Override
  public long size() {
    return live.get() + leases.keys() + reservations.keys();
  }

  @Override
  public String toString() {
    return "memory(maxKeys=" + maxKeys + ")";
  }
}
