package dev.sluice.redis;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Identity;
import dev.sluice.core.KeyState;
import dev.sluice.core.Reservation;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Ticker;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * The {@link Store} behind {@link RedisStore}; see there for the design. Asynchronous
 * underneath: every operation is a stage from the {@link Calls} discipline (circuit, in-flight
 * bound, deadline) on one of the {@link Connector}'s connections ({@link Lanes}), with keys from
 * {@link Keys}, checks run by {@link Checks} and the {@link Evaluator}. The synchronous
 * methods, for library callers, wait for that stage, at most its deadline, and always go out on
 * the shared lane; nothing on the store's own threads ever waits.
 */
final class LettuceStore implements Store {

  private final Endpoint endpoint;
  private final Keys keys;
  private final Connector connector;
  private final Calls calls;
  private final Evaluator evaluator;
  private final RefusalCache refusals;
  private final RedisAdmin admin;
  private final Checks checks;
  private final Ticker ticker;
  private final LongSupplier pinned;
  private final long waitNanos;

  LettuceStore(RedisStore.Builder b) {
    this.endpoint = b.endpoint;
    this.keys = new Keys(b.keyPrefix, b.endpoint.cluster());
    this.ticker = b.ticker;
    this.pinned = b.pinnedMicros;
    this.refusals = b.refusalCacheSize > 0 && b.pinnedMicros == null
        ? new RefusalCache(b.refusalCacheSize) : null;
    Events events = new Events(b.listener);
    Library library = new Library(b.functions, b.ticker, endpoint);
    // The callbacks run only once connected, after start() below.
    this.connector = new Connector(b, library, events, this::warmUp, this::connectionBack);
    this.calls = new Calls(b, connector, library, events);
    this.evaluator = new Evaluator(keys, calls, b.pinnedMicros, connector.lanes().size());
    this.admin = new RedisAdmin(keys, calls, this::clock);
    this.checks = new Checks(keys, connector.lanes(), calls, evaluator, refusals, admin, ticker);
    this.waitNanos = b.deadlineNanos + Threads.slackNanos(b.deadlineNanos);
    connector.start();
  }

  private CompletableFuture<Verdict> warmUp(int lane, Library.Conn c) {
    return evaluator.warmUp(lane, c);
  }

  private void connectionBack() {
    calls.probeNow("the connection is back");
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

  /** True once the store is ready (tests wait on it). */
  boolean connected() {
    return connector.lanes().get(0).conn() != null;
  }

  /** The store's connections (tests look at them). */
  Lanes lanes() {
    return connector.lanes();
  }

  CircuitBreaker breaker() {
    return calls.breaker();
  }

  Keys keys() {
    return keys;
  }

  /** Refusal notes sent to Redis for the admin API (see RedisAdmin). */
  long adminNotes() {
    return admin.notes();
  }

  boolean adminNotesSettled() {
    return admin.notesSettled();
  }

  int refusalCacheEntries() {
    return refusals == null ? 0 : refusals.size();
  }

  @Override
  public CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity, long cost,
      Verdicts out) {
    return checks.evaluateAsync(rules, identity, cost, out);
  }

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    // Written here, not in a continuation: a wait that gives up must leave the buffer alone.
    Checks.write(await(checks.verdicts(rules, identity, cost, true), "evaluate"), out);
  }

  // Leases: a sorted set of lease id -> expiry per key (leases.lua).

  @Override
  public CompletionStage<Long> acquireAsync(String key, int max, long ttlNanos) {
    return acquire(key, max, ttlNanos, false);
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    return await(acquire(key, max, ttlNanos, true), "acquire");
  }

  private CompletableFuture<Long> acquire(String key, int max, long ttlNanos, boolean blocking) {
    long id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    return lease("acquire", blocking, key, "A", id, max, ttlNanos)
        .thenApply(ok -> ok == 1 ? id : 0L);
  }

  @Override
  public CompletionStage<Boolean> renewAsync(String key, long lease, long ttlNanos) {
    return lease("renew", false, key, "R", lease, 0, ttlNanos).thenApply(ok -> ok == 1);
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    return await(lease("renew", true, key, "R", lease, 0, ttlNanos), "renew") == 1;
  }

  @Override
  public CompletionStage<Void> releaseAsync(String key, long lease) {
    return lease("release", false, key, "X", lease, 0, 0).thenApply(x -> null);
  }

  @Override
  public void release(String key, long lease) {
    await(lease("release", true, key, "X", lease, 0, 0), "release");
  }

  @Override
  public int leases(String key) {
    return (int) (long) await(lease("leases", true, key, "N", 0, 0, 0), "leases");
  }

  private CompletableFuture<Long> lease(String what, boolean blocking, String key, String op,
      long id, int max, long ttlNanos) {
    String[] k = {keys.lease(key)};
    String[] a = {clock(), op, Long.toString(id), Integer.toString(max),
        Long.toString(RuleCodec.micros(ttlNanos))};
    return calls.call(what, blocking, (c, lane) -> calls.<Long>run(c, Scripts.LEASES,
        ScriptOutputType.INTEGER, k, a));
  }

  @Override
  public CompletionStage<Verdict> cooldownAsync(String key, Cooldown policy,
      Cooldown.Event event) {
    return cooldown(key, policy, event, false);
  }

  private CompletableFuture<Verdict> cooldown(String key, Cooldown policy, Cooldown.Event event,
      boolean blocking) {
    String e = switch (event) {
      case CHECK -> "C";
      case FAILURE -> "F";
      case SUCCESS -> "S";
    };
    return cooldownCall(key, policy, e, blocking).thenApply(r -> Evaluator.verdict(r, 1));
  }

  /**
   * cooldown.lua on {@code key}'s state (and its reservations), {@code event} one of its
   * letters; {@code more}: the reservation id, and for R its ttl.
   */
  private CompletableFuture<List<Object>> cooldownCall(String key, Cooldown policy, String event,
      boolean blocking, String... more) {
    String[] k = more.length == 0 ? new String[] {keys.cooldown(key)}
        : new String[] {keys.cooldown(key), keys.reserved(key)};
    String[] a = new String[6 + more.length];
    a[0] = clock();
    a[1] = event;
    a[2] = Integer.toString(policy.maxRetries());
    a[3] = Long.toString(RuleCodec.micros(policy.retryWindow().toNanos()));
    a[4] = Long.toString(RuleCodec.micros(policy.cooldown().toNanos()));
    a[5] = Long.toString(RuleCodec.micros(policy.maxCooldown().toNanos()));
    System.arraycopy(more, 0, a, 6, more.length);
    return calls.call("cooldown", blocking, (c, lane) -> calls.run(c, Scripts.COOLDOWN,
        ScriptOutputType.MULTI, k, a));
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    return await(cooldown(key, policy, event, true), "cooldown");
  }

  // Reservations of rules counted on responses: reserve.lua, or cooldown.lua's R, then a
  // settlement that drops the reservation and applies its event, each one script call.

  @Override
  public CompletionStage<Reservation> reserveAsync(Rule rule, Identity identity, long cost,
      long ttlNanos) {
    long id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    String core = rule.keyFor(identity);
    String ttl = Long.toString(Math.max(1, RuleCodec.micros(ttlNanos)));
    CompletableFuture<List<Object>> reply = rule.cooldown() != null
        ? cooldownCall(core, rule.cooldown(), "R", false, Long.toString(id), ttl)
        : evaluator.reservation(Scripts.RESERVE, rule, keys.rule(core), keys.reserved(core),
            Long.toString(cost), Long.toString(id), ttl);
    return reply.thenApply(r -> {
      Verdict v = Evaluator.verdict(r, 1);
      return (Long) r.get(1) == 4 ? Reservation.inFlight(v)
          : v.allowed() ? Reservation.held(id, v) : Reservation.refused(v);
    });
  }

  @Override
  public CompletionStage<Verdict> settleAsync(Rule rule, Identity identity, long id, long cost,
      Reservation.Settlement how) {
    String core = rule.keyFor(identity);
    String lease = Long.toString(id);
    if (rule.cooldown() != null) {
      String event = how == Reservation.Settlement.FAILURE ? "F"
          : how == Reservation.Settlement.SUCCESS && rule.resetsOnSuccess(identity) ? "S" : "N";
      return cooldownCall(core, rule.cooldown(), event, false, lease)
          .thenApply(r -> Evaluator.verdict(r, 1));
    }
    return evaluator.reservation(Scripts.SETTLE, rule, keys.rule(core), keys.reserved(core),
        Long.toString(cost), lease, how == Reservation.Settlement.FAILURE ? "1" : "0")
        .thenApply(r -> Evaluator.verdict(r, 1));
  }

  // The admin view: see RedisAdmin. A bad key text fails the stage, as every other problem does.

  @Override
  public CompletionStage<List<KeyState>> refusedAsync(Rule rule, int limit) {
    return admin.refused(rule, limit);
  }

  @Override
  public CompletionStage<KeyState> keyStateAsync(Rule rule, String key) {
    return guarded(() -> admin.state(rule, key));
  }

  @Override
  public CompletionStage<KeyState> peekAsync(Rule rule, dev.sluice.core.Identity identity) {
    return guarded(() -> admin.state(rule, identity));
  }

  @Override
  public CompletionStage<Boolean> banAsync(Rule rule, String key, java.time.Duration length) {
    return guarded(() -> forgetting(rule, key, admin.ban(rule, key, length)));
  }

  @Override
  public CompletionStage<Boolean> unbanAsync(Rule rule, String key) {
    return guarded(() -> forgetting(rule, key, admin.unban(rule, key)));
  }

  @Override
  public CompletionStage<Boolean> resetAsync(Rule rule, String key) {
    return guarded(() -> forgetting(rule, key, admin.reset(rule, key)));
  }

  /** Drops the key's cached refusal once Redis has changed it, so the next check asks Redis. */
  private <T> CompletableFuture<T> forgetting(Rule rule, String key, CompletableFuture<T> done) {
    if (refusals == null) {
      return done;
    }
    String coreKey = rule.keyFor(rule.identityOf(key));
    return done.thenApply(v -> {
      refusals.forget(coreKey);
      return v;
    });
  }

  private static <T> CompletionStage<T> guarded(java.util.function.Supplier<
      CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Keys in the Redis database (all of them, not only Sluice's; summed over a cluster). */
  @Override
  public long size() {
    return await(calls.call("size", true, (c, lane) -> c.cmd().dbsize().toCompletableFuture()),
        "size");
  }

  private String clock() {
    return pinned == null ? "" : Long.toString(pinned.getAsLong());
  }

  /**
   * The synchronous API: waits for {@code stage}, which completes by its deadline, allowing
   * the timer its slack. On the store's own threads it fails at once instead: the answer
   * could only arrive on the thread that would be waiting for it.
   */
  private <T> T await(CompletionStage<T> stage, String what) {
    CompletableFuture<T> f = stage.toCompletableFuture();
    if (!f.isDone() && Threads.onStoreThread()) {
      throw new StoreException("sluice-redis: " + what + ": a blocking call on the store's own "
          + "thread " + Thread.currentThread().getName() + " cannot wait for Redis; use the "
          + "asynchronous API there");
    }
    try {
      return f.get(waitNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new StoreException("sluice-redis: " + what + ": no answer from " + endpoint
          + " within " + TimeUnit.NANOSECONDS.toMillis(calls.deadlineNanos()) + " ms");
    } catch (ExecutionException e) {
      Throwable cause = Library.unwrap(e.getCause());
      throw cause instanceof StoreException se ? se
          : new StoreException("sluice-redis: " + what + ": " + cause, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException("sluice-redis: " + what + ": interrupted", e);
    }
  }

  /** Stops connecting and closes the connection; quiet: closing is not a failure. */
  @Override
  public void close() {
    connector.close();
  }

  @Override
  public String toString() {
    return "redis(" + endpoint + ", prefix=" + keys.prefix() + ", deadline="
        + TimeUnit.NANOSECONDS.toMillis(calls.deadlineNanos()) + "ms)";
  }
}
