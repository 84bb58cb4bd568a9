package dev.sluice.redis;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Ticker;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The {@link Store} behind {@link RedisStore}; see there for the design. The connection is the
 * {@link Connector}'s, the scripts the {@link Library}'s; each call here goes through the
 * {@link CircuitBreaker}, the in-flight bound and the deadline.
 */
final class LettuceStore implements Store {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
  private static final int VERDICT_WIDTH = 6;
  private static final Rule WARM_UP = Rule.builder("sluice-warm-up")
      .limit(Limit.tokenBucket("b", 1, 1, Duration.ofSeconds(1))).build();

  private final Endpoint endpoint;
  private final String prefix;
  private final long deadlineNanos;
  private final CircuitBreaker breaker;
  private final Store fallback;
  private final RefusalCache refusals;
  private final Semaphore inFlight;
  private final int maxInFlight;
  private final Ticker ticker;
  private final LongSupplier pinned;
  private final RuleCodec codec = new RuleCodec();
  private final String warmId = Long.toHexString(ThreadLocalRandom.current().nextLong());
  private final Events events;
  private final Library library;
  private final Connector connector;
  private volatile long openedAt;

  LettuceStore(RedisStore.Builder b) {
    this.endpoint = b.endpoint;
    this.prefix = b.keyPrefix;
    this.deadlineNanos = b.deadlineNanos;
    this.ticker = b.ticker;
    this.events = new Events(b.listener);
    this.breaker = new CircuitBreaker(b.circuit, b.deadlineNanos, b.ticker, this::circuitMoved);
    this.fallback = b.fallback;
    this.refusals = b.refusalCacheSize > 0 && b.pinnedMicros == null
        ? new RefusalCache(b.refusalCacheSize) : null;
    this.maxInFlight = b.maxInFlight;
    this.inFlight = new Semaphore(b.maxInFlight);
    this.pinned = b.pinnedMicros;
    this.library = new Library(b.functions, b.ticker, endpoint);
    this.connector = new Connector(b, library, events, this::warmUp,
        () -> breaker.probeNow("the connection is back"));
  }

  /**
   * Logs an outage once: when the circuit opens from closed and when it closes again; the
   * half-open probes and their reopenings in between are events only.
   */
  private void circuitMoved(CircuitBreaker.State from, CircuitBreaker.State to, String why) {
    switch (to) {
      case OPEN -> {
        if (from == CircuitBreaker.State.CLOSED) {
          openedAt = ticker.read();
          LOG.log(System.Logger.Level.WARNING, "sluice-redis: circuit opened for {0}: {1}; "
              + "calls fail fast (degraded) and probes resume them", endpoint, why);
        }
        events.emit(RedisStore.Event.CIRCUIT_OPENED, why);
      }
      case HALF_OPEN -> events.emit(RedisStore.Event.CIRCUIT_HALF_OPEN, why);
      case CLOSED -> {
        LOG.log(System.Logger.Level.INFO, "sluice-redis: circuit closed for {0} after {1} ms: "
            + "{2}", endpoint, String.valueOf(TimeUnit.NANOSECONDS.toMillis(ticker.read()
            - openedAt)), why);
        events.emit(RedisStore.Event.CIRCUIT_CLOSED, why);
      }
      default -> throw new AssertionError(to);
    }
  }

  /** Waits for the store to be ready; see {@link RedisStore.Builder#awaitConnected}. */
  void awaitReady(Duration wait) {
    try {
      connector.awaitReady(wait);
    } catch (StoreException e) {
      close();
      throw e;
    }
  }

  /** True once the first connection is up (tests wait on it). */
  boolean connected() {
    return connector.conn() != null;
  }

  CircuitBreaker breaker() {
    return breaker;
  }

  int refusalCacheEntries() {
    return refusals == null ? 0 : refusals.size();
  }

  // ---------------------------------------------------------------- keys

  /**
   * The rule's key: the prefix, the rule name, then the identity part as a hash tag. A rule's
   * limits share one key, hence one slot; rules keyed on the same identity (a route's rule and
   * the global per-address backstop) share a slot too, so their check is one script call on a
   * cluster. Core keys are {@code <escaped rule>:<escaped values>}; the rule name holds no ':'.
   */
  String ruleKey(String key) {
    String escaped = escape(key);
    int colon = escaped.indexOf(':');
    if (colon < 0) {
      return prefix + "{" + escaped + "}";
    }
    return prefix + escaped.substring(0, colon + 1) + "{" + escaped.substring(colon + 1) + "}";
  }

  /**
   * Keys from the core are already escaped (no braces); any other caller's braces are
   * percent-encoded behind a leading '~', so no input can choose a hash slot. Injective: an
   * unescaped key never starts with '~'.
   */
  static String escape(String key) {
    if (!key.isEmpty() && key.indexOf('{') < 0 && key.indexOf('}') < 0 && key.charAt(0) != '~') {
      return key;
    }
    StringBuilder sb = new StringBuilder(key.length() + 8).append('~');
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      switch (c) {
        case '%' -> sb.append("%25");
        case '{' -> sb.append("%7B");
        case '}' -> sb.append("%7D");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }

  private String clockArg() {
    return pinned == null ? "" : Long.toString(pinned.getAsLong());
  }

  // ---------------------------------------------------------------- calls

  /**
   * Runs {@code op} under the circuit, the in-flight bound and the deadline. Every failure is a
   * {@link StoreException}; nothing waits past the deadline. The circuit hears the outcome from
   * the call's completion, not from this wait, so it counts the same however a call is waited
   * for (Lettuce's own timeout, the deadline, completes every call).
   */
  private <T> T call(String what, Function<Library.Conn, CompletableFuture<T>> op) {
    Library.Conn c = connector.conn();
    if (c == null) {
      throw new StoreException("sluice-redis: " + what + ": not connected to " + endpoint
          + " yet");
    }
    long permit = breaker.tryAcquire();
    if (permit == CircuitBreaker.REFUSED) {
      throw new StoreException("sluice-redis: " + what + ": circuit open for " + endpoint);
    }
    if (!inFlight.tryAcquire()) {
      breaker.release(permit);
      throw new StoreException("sluice-redis: " + what + ": " + maxInFlight
          + " calls already waiting for " + endpoint);
    }
    long start = ticker.read();
    CompletableFuture<T> f;
    try {
      f = op.apply(c);
    } catch (RuntimeException e) {
      inFlight.release();
      breaker.record(permit, start, e);
      throw new StoreException("sluice-redis: " + what + ": " + e.getMessage(), e);
    }
    f.whenComplete((r, e) -> {
      inFlight.release();
      breaker.record(permit, start, e == null ? null : Library.unwrap(e));
    });
    try {
      return f.get(deadlineNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new StoreException("sluice-redis: " + what + ": no answer from " + endpoint
          + " within " + Duration.ofNanos(deadlineNanos).toMillis() + " ms");
    } catch (ExecutionException e) {
      throw new StoreException("sluice-redis: " + what + ": " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException("sluice-redis: " + what + ": interrupted", e);
    }
  }

  private <T> CompletableFuture<T> run(Library.Conn c, Scripts.Script s, ScriptOutputType type,
      String[] keys, String[] args) {
    return library.run(c, s, type, keys, args);
  }

  // ---------------------------------------------------------------- evaluate

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    int n = rules.size();
    List<String> keys = new ArrayList<>(n);
    for (Rule rule : rules) {
      keys.add(rule.keyFor(identity));
    }
    List<Verdict> verdicts;
    try {
      verdicts = evaluate(rules, keys, cost);
    } catch (StoreException e) {
      if (fallback != null) {
        fallback.evaluate(rules, identity, cost, out);
        out.markDegraded();
        return;
      }
      throw e;
    }
    out.reset(n);
    for (int i = 0; i < n; i++) {
      out.set(i, verdicts.get(i));
    }
  }

  /** The verdicts of a check on the rules' keys ({@link Rule#keyFor}), in check order. */
  List<Verdict> evaluate(List<Rule> rules, List<String> keys, long cost) {
    int n = rules.size();
    if (n != keys.size()) {
      throw new IllegalArgumentException("keys : " + keys.size() + " (expected: " + n + ")");
    }
    long local = ticker.read();
    if (refusals != null) {
      List<Verdict> cached = refusals.lookup(rules, keys, cost, local);
      if (cached != null) {
        return cached;
      }
    }
    List<Verdict> out = remoteEvaluate(rules, keys, cost);
    if (refusals != null) {
      refusals.record(rules, keys, cost, out, local);
    }
    return out;
  }

  /** The rules of one hash slot, in check order. */
  private static final class Group {
    final List<Integer> index = new ArrayList<>(2);
    final List<String> keys = new ArrayList<>(4);
    final List<String> args = new ArrayList<>(16);
    long now;
  }

  private Group group(List<Rule> rules, List<String> keys, List<Integer> which) {
    Group g = new Group();
    for (int i : which) {
      RuleCodec.Encoded e = codec.encode(rules.get(i));
      String key = ruleKey(keys.get(i));
      g.index.add(i);
      g.keys.add(key);
      for (int j = 0; j < e.logs(); j++) {
        g.keys.add(key + ":" + j);
      }
      g.args.addAll(Arrays.asList(e.args()));
    }
    return g;
  }

  private static String[] withHeader(List<String> body, String... head) {
    String[] a = new String[head.length + body.size()];
    System.arraycopy(head, 0, a, 0, head.length);
    for (int i = 0; i < body.size(); i++) {
      a[head.length + i] = body.get(i);
    }
    return a;
  }

  private List<Verdict> remoteEvaluate(List<Rule> rules, List<String> keys, long cost) {
    int n = rules.size();
    if (n == 1) {
      RuleCodec.Bucket b = codec.encode(rules.get(0)).bucket();
      if (b != null && cost > 0 && cost < TWO53 / b.intervalMicros()) {
        return List.of(bucket(b, keys.get(0), cost));
      }
    }
    String costArg = Long.toString(cost);
    List<List<Integer>> slots = partition(keys);
    List<Group> groups = new ArrayList<>(slots.size());
    for (List<Integer> which : slots) {
      groups.add(group(rules, keys, which));
    }
    String clock = clockArg();
    List<List<Object>> replies = call("evaluate", c -> {
      List<CompletableFuture<List<Object>>> fs = new ArrayList<>(groups.size());
      for (Group g : groups) {
        String[] args = withHeader(g.args, clock, costArg, Integer.toString(g.index.size()));
        fs.add(run(c, Scripts.EVALUATE, ScriptOutputType.MULTI,
            g.keys.toArray(String[]::new), args));
      }
      if (fs.size() == 1) {
        return fs.get(0).thenApply(List::of);
      }
      return CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).thenApply(v -> {
        List<List<Object>> all = new ArrayList<>(fs.size());
        for (CompletableFuture<List<Object>> f : fs) {
          all.add(f.join());
        }
        return all;
      });
    });
    Verdict[] out = new Verdict[n];
    boolean refused = false;
    for (int gi = 0; gi < groups.size(); gi++) {
      Group g = groups.get(gi);
      List<Object> reply = replies.get(gi);
      g.now = (Long) reply.get(0);
      for (int k = 0; k < g.index.size(); k++) {
        int i = g.index.get(k);
        out[i] = verdict(reply, 1 + k * VERDICT_WIDTH);
        if (!out[i].allowed() && rules.get(i).mode() == Mode.ENFORCE) {
          refused = true;
        }
      }
    }
    if (refused && groups.size() > 1) {
      refund(rules, keys, cost, groups, out);
    }
    return Arrays.asList(out);
  }

  private static final long TWO53 = 1L << 53;

  /** bucket.lua: one integer back, decoded with the rule's parameters (see there). */
  private Verdict bucket(RuleCodec.Bucket b, String key, long cost) {
    String[] k = {ruleKey(key)};
    String[] a = {clockArg(), Long.toString(cost), b.prefix(), b.cap(), b.interval()};
    long r = call("evaluate", c -> this.<Long>run(c, Scripts.BUCKET, ScriptOutputType.INTEGER,
        k, a));
    return bucketVerdict(b, cost, r);
  }

  private static Verdict bucketVerdict(RuleCodec.Bucket b, long cost, long r) {
    long cap = b.capMicros();
    long interval = b.intervalMicros();
    if (r >= 0) {
      return Verdict.allowed(0, Math.floorDiv(cap - r, interval), r * 1000L, Double.NaN);
    }
    long backlog = -1 - r;
    long retry = backlog + cost * interval - cap;
    return Verdict.refused(0, Math.max(0, Math.floorDiv(cap - backlog, interval)),
        backlog * 1000L, retry * 1000L, Double.NaN, false);
  }

  /**
   * One token-bucket decision's client work on {@code c} (codec, key, script call, reply), at
   * cost 0 on a key nobody uses: Redis finds nothing and stores nothing (bucket.lua deletes a
   * fresh state). The {@link Connector} runs it before the store is ready.
   */
  private CompletableFuture<Verdict> warmUp(Library.Conn c) {
    RuleCodec.Bucket b = codec.encode(WARM_UP).bucket();
    String[] k = {ruleKey(WARM_UP.name() + ":" + warmId)};
    String[] a = {clockArg(), "0", b.prefix(), b.cap(), b.interval()};
    return library.<Long>run(c, Scripts.BUCKET, ScriptOutputType.INTEGER, k, a)
        .thenApply(r -> bucketVerdict(b, 0, r));
  }

  /** Indices of the rules per hash slot; one group on a standalone server. */
  private List<List<Integer>> partition(List<String> keys) {
    int n = keys.size();
    List<Integer> all = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      all.add(i);
    }
    if (!endpoint.cluster() || n == 1) {
      return List.of(all);
    }
    Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      bySlot.computeIfAbsent(SlotHash.getSlot(ruleKey(keys.get(i))), s -> new ArrayList<>())
          .add(i);
    }
    return new ArrayList<>(bySlot.values());
  }

  /**
   * Consume-then-refund: a slot whose enforcing rules all allowed has consumed; another slot
   * refused, so the check is refused and the consuming slots give their allowance back.
   */
  private void refund(List<Rule> rules, List<String> keys, long cost, List<Group> groups,
      Verdict[] out) {
    List<Group> refunds = new ArrayList<>();
    for (Group g : groups) {
      List<Integer> allowed = new ArrayList<>();
      boolean pass = true;
      for (int i : g.index) {
        if (out[i].allowed()) {
          allowed.add(i);
        } else if (rules.get(i).mode() == Mode.ENFORCE) {
          pass = false;
        }
      }
      if (pass && !allowed.isEmpty()) {
        Group r = group(rules, keys, allowed);
        r.now = g.now;
        refunds.add(r);
      }
    }
    if (refunds.isEmpty()) {
      return;
    }
    String clock = clockArg();
    String costArg = Long.toString(cost);
    try {
      call("refund", c -> {
        List<CompletableFuture<Object>> fs = new ArrayList<>();
        for (Group r : refunds) {
          String[] args = withHeader(r.args, clock, Long.toString(r.now), costArg,
              Integer.toString(r.index.size()));
          fs.add(run(c, Scripts.REFUND, ScriptOutputType.INTEGER,
              r.keys.toArray(String[]::new), args));
        }
        return CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new));
      });
    } catch (StoreException e) {
      LOG.log(System.Logger.Level.WARNING, "sluice-redis: refund after a refused cross-slot "
          + "check failed; the allowance stays spent until it refills ({0})", e.getMessage());
    }
  }

  private static Verdict verdict(List<Object> r, int at) {
    long type = (Long) r.get(at);
    int limit = (int) (long) (Long) r.get(at + 1);
    long remaining = (Long) r.get(at + 2);
    long reset = (Long) r.get(at + 3) * 1000L;
    long retry = (Long) r.get(at + 4) * 1000L;
    long rawScore = (Long) r.get(at + 5);
    double score = rawScore < 0 ? Double.NaN : (double) rawScore / 1_000_000L;
    if (type == 0) {
      return Verdict.allowed(limit, remaining, reset, score);
    }
    if (type == 3) {
      return Verdict.banned(retry);
    }
    return Verdict.refused(limit, remaining, reset, retry, score, type == 2);
  }

  // ---------------------------------------------------------------- leases, cooldown

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    long id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    try {
      Long ok = leaseCall("acquire", key, "A", id, max, ttlNanos);
      return ok == 1 ? id : 0;
    } catch (StoreException e) {
      if (fallback != null) {
        return fallback.acquire(key, max, ttlNanos);
      }
      throw e;
    }
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    try {
      return leaseCall("renew", key, "R", lease, 0, ttlNanos) == 1;
    } catch (StoreException e) {
      if (fallback != null) {
        return fallback.renew(key, lease, ttlNanos);
      }
      throw e;
    }
  }

  @Override
  public void release(String key, long lease) {
    try {
      leaseCall("release", key, "X", lease, 0, 0);
    } catch (StoreException e) {
      if (fallback != null) {
        fallback.release(key, lease);
        return;
      }
      throw e;
    }
  }

  @Override
  public int leases(String key) {
    try {
      return (int) (long) leaseCall("leases", key, "N", 0, 0, 0);
    } catch (StoreException e) {
      if (fallback != null) {
        return fallback.leases(key);
      }
      throw e;
    }
  }

  private Long leaseCall(String what, String key, String op, long id, int max, long ttlNanos) {
    String[] keys = {ruleKey(key) + ":z"};
    String[] args = {clockArg(), op, Long.toString(id), Integer.toString(max),
        Long.toString(RuleCodec.micros(ttlNanos))};
    return call(what, c -> run(c, Scripts.LEASES, ScriptOutputType.INTEGER, keys, args));
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    String[] keys = {ruleKey(key) + ":c"};
    String[] args = {clockArg(),
        switch (event) {
          case CHECK -> "C";
          case FAILURE -> "F";
          case SUCCESS -> "S";
        },
        Integer.toString(policy.maxRetries()),
        Long.toString(RuleCodec.micros(policy.retryWindow().toNanos())),
        Long.toString(RuleCodec.micros(policy.cooldown().toNanos())),
        Long.toString(RuleCodec.micros(policy.maxCooldown().toNanos()))};
    try {
      List<Object> r = call("cooldown", c -> run(c, Scripts.COOLDOWN,
          ScriptOutputType.MULTI, keys, args));
      return verdict(r, 1);
    } catch (StoreException e) {
      if (fallback != null) {
        return fallback.cooldown(key, policy, event).asDegraded();
      }
      throw e;
    }
  }

  /** Keys in the Redis database (all of them, not only Sluice's; summed over a cluster). */
  @Override
  public long size() {
    return call("size", c -> c.cmd().dbsize().toCompletableFuture());
  }

  /** Stops connecting and closes the connection; quiet: closing is not a failure. */
  @Override
  public void close() {
    connector.close();
  }

  @Override
  public String toString() {
    return "redis(" + endpoint + ", prefix=" + prefix + ", deadline="
        + Duration.ofNanos(deadlineNanos).toMillis() + "ms)";
  }
}
