package dev.sluice.redis;

import dev.sluice.core.StoreException;
import dev.sluice.core.Ticker;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.ScriptOutputType;
import io.netty.util.Timeout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The call discipline: every call to Redis goes through the circuit, the in-flight bound and the
 * deadline, and nothing here waits. A call that may not go (not connected yet, circuit open,
 * {@code maxInFlight} calls pending) returns a stage that has already failed; one that goes
 * fails at its deadline at the latest. Every failure is a {@link StoreException}.
 *
 * <p>The deadline is Lettuce's command timeout, which Lettuce already schedules on a timer for
 * every command, so it costs nothing more per call (docs/bench/redis.md measured the options).
 * A call that needs a second command (EVALSHA after "Function not found", EVAL after NOSCRIPT,
 * a refund) gives it only what is left of the first one's deadline, on the same timer.
 *
 * <p>Each call goes out on the {@link Lanes lane} of its thread. Stages complete on the store's
 * threads: answers on the I/O thread of that lane's connection (the shared lane's is Lettuce's,
 * a loop's lane's is that loop), deadlines on Lettuce's computation pool. What runs there is the
 * store's own decoding and the caller's continuations, which must not block.
 */
final class Calls {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());

  private final Endpoint endpoint;
  private final long deadlineNanos;
  private final Ticker ticker;
  private final CircuitBreaker breaker;
  private final Semaphore inFlight;
  private final int maxInFlight;
  private final Connector connector;
  private final Library library;
  private final Events events;
  private final Library.Budget budget = this::within;
  private volatile long openedAt;

  /** One operation on the connection of lane {@code lane}. */
  @FunctionalInterface
  interface Op<T> {
    CompletableFuture<T> on(Library.Conn c, int lane);
  }

  Calls(RedisStore.Builder b, Connector connector, Library library, Events events) {
    this.endpoint = b.endpoint;
    this.deadlineNanos = b.deadlineNanos;
    this.ticker = b.ticker;
    this.maxInFlight = b.maxInFlight;
    this.inFlight = new Semaphore(b.maxInFlight);
    this.connector = connector;
    this.library = library;
    this.events = events;
    this.breaker = new CircuitBreaker(b.circuit, b.deadlineNanos, b.ticker, this::circuitMoved);
  }

  CircuitBreaker breaker() {
    return breaker;
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  /** The connection came back: an open circuit probes at once. */
  void probeNow(String why) {
    breaker.probeNow(why);
  }

  /**
   * Runs {@code op} under the circuit, the in-flight bound and the deadline, on this thread's
   * lane ({@code blocking}: the shared one, see {@link Lanes#pick}). The circuit hears each
   * outcome from the call's completion, so it counts the same however a caller waits.
   */
  <T> CompletableFuture<T> call(String what, boolean blocking, Op<T> op) {
    Lanes.Lane lane = connector.lanes().pick(blocking);
    long permit;
    try {
      permit = enter(what, lane);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    long start = ticker.read();
    CompletableFuture<T> f;
    try {
      f = op.on(lane.conn(), lane.index);
      if (!connector.deadlineInClient()) {
        f = within(f, start + deadlineNanos);
      }
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    // One stage carries both the bookkeeping and the caller's result: the permit is back and
    // the outcome recorded before any continuation of the caller runs.
    return f.handle((r, e) -> {
      StoreException failure = exit(what, permit, start, e);
      if (failure != null) {
        throw failure;
      }
      return r;
    });
  }

  /**
   * Admits one call on {@code lane} as {@link #call} does, for a caller that completes it
   * itself: the circuit's permit, which the call's outcome must be handed back with to {@link
   * #exit}, exactly once.
   *
   * @throws StoreException when the call may not go (not connected, circuit open, {@code
   *     maxInFlight} calls pending)
   */
  long enter(String what, Lanes.Lane lane) {
    if (lane.conn() == null) {
      throw refusal(what, "not connected to " + endpoint + " yet");
    }
    long permit = breaker.tryAcquire();
    if (permit == CircuitBreaker.REFUSED) {
      throw refusal(what, "circuit open for " + endpoint);
    }
    if (!inFlight.tryAcquire()) {
      breaker.release(permit);
      throw refusal(what, maxInFlight + " calls already waiting for " + endpoint);
    }
    return permit;
  }

  /**
   * The end of a call admitted by {@link #enter} at ticker time {@code start}: the permit back,
   * the outcome recorded; the failure to hand on, null when {@code error} is.
   */
  StoreException exit(String what, long permit, long start, Throwable error) {
    inFlight.release();
    Throwable cause = error == null ? null : Library.unwrap(error);
    breaker.record(permit, start, cause);
    return cause == null ? null : failure(what, cause);
  }

  /**
   * Sends {@code op} that nobody waits for, outside the circuit and the in-flight bound (the
   * admin API's notes): completes normally, failed or not, at once when not connected.
   */
  CompletableFuture<Void> send(Function<Library.Conn, CompletableFuture<?>> op) {
    Library.Conn c = connector.lanes().pick(false).conn();
    if (c == null) {
      return CompletableFuture.completedFuture(null);
    }
    try {
      return within(op.apply(c), ticker.read() + deadlineNanos).handle((r, e) -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(null);
    }
  }

  /** One entry point on {@code c}; a second command, if any, within the first's deadline. */
  <T> CompletableFuture<T> run(Library.Conn c, Scripts.Script s, ScriptOutputType type,
      String[] keys, String[] args) {
    return library.run(c, s, type, keys, args, budget, ticker.read() + deadlineNanos);
  }

  /**
   * {@code f}'s outcome, or a timeout if it has none by {@code deadline} (ticker time); never
   * completes {@code f} itself, whose own completion may still have bookkeeping to do. As
   * Lettuce does with its timeouts, the timer only hands the failure to the computation pool,
   * so no continuation runs on (and delays) the timer's thread.
   */
  <T> CompletableFuture<T> within(CompletableFuture<T> f, long deadline) {
    if (f.isDone()) {
      return f;
    }
    CompletableFuture<T> bounded = new CompletableFuture<>();
    long left = deadline - ticker.read();
    if (left <= 0) {
      bounded.completeExceptionally(timeout());
      return bounded;
    }
    Timeout t = connector.timer().newTimeout(x -> connector.executor().execute(
        () -> bounded.completeExceptionally(timeout())), left, TimeUnit.NANOSECONDS);
    f.whenComplete((r, e) -> {
      t.cancel();
      if (e != null) {
        bounded.completeExceptionally(e);
      } else {
        bounded.complete(r);
      }
    });
    return bounded;
  }

  long now() {
    return ticker.read();
  }

  RedisCommandTimeoutException timeout() {
    return new RedisCommandTimeoutException("Command timed out after "
        + Duration.ofNanos(deadlineNanos).toMillis() + " ms");
  }

  private static StoreException refusal(String what, String why) {
    return new StoreException("sluice-redis: " + what + ": " + why);
  }

  private StoreException failure(String what, Throwable cause) {
    if (cause instanceof StoreException se) {
      return se;
    }
    if (cause instanceof RedisCommandTimeoutException || cause instanceof TimeoutException) {
      return new StoreException("sluice-redis: " + what + ": no answer from " + endpoint
          + " within " + Duration.ofNanos(deadlineNanos).toMillis() + " ms", cause);
    }
    return new StoreException("sluice-redis: " + what + ": " + cause, cause);
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
}
