package dev.sluice.redis;

import dev.sluice.core.Circuit;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import io.lettuce.core.RedisClient;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The Redis and Redis Cluster store: every algorithm runs as a Lua script inside Redis, with
 * time from the server's {@code TIME}, so instances with skewed clocks share one exact limit.
 *
 * <pre>{@code
 * Store store = RedisStore.builder()
 *     .uri("redis://localhost:6379")          // or rediss://, redis-cluster://h1:p1,h2:p2
 *     .deadline(Duration.ofMillis(50))
 *     .awaitConnected(Duration.ofSeconds(5))  // build() returns once Redis answers
 *     .build();
 * RateLimiter limiter = RateLimiter.of(store);
 * }</pre>
 *
 * <h2>One round trip per decision, asynchronous</h2>
 * A check is one script call when its keys share a hash slot: always on a standalone server,
 * and on a cluster for every single-rule check (a rule's state is under the hash tag of its
 * identity); across slots, one call per slot, then consume-then-refund before the check
 * completes. Concurrent token-bucket decisions on a standalone server share a call. Every
 * operation is asynchronous ({@code evaluateAsync}, ...); the synchronous ones wait for it.
 * Durations are whole microseconds in Redis, rounded up (sluice-redis/README.md).
 *
 * <h2>Failures</h2>
 * Each call has a deadline; past it, on a connection error, when the circuit is open or when too
 * many calls are pending, its stage fails with {@link dev.sluice.core.StoreException} (the rate
 * limiter applies each rule's on-store-error outcome and marks the decision degraded), or, with
 * a {@linkplain Builder#fallback fallback store}, the fallback answers. Stages complete on the
 * store's I/O and timer threads (or, with {@link Builder#eventLoops}, on the caller's own event
 * loop): continuations must not block there. The store connects in the
 * background; {@link Builder#awaitConnected} makes {@code build()} wait for it, and a
 * {@link Listener} hears when it is ready, loses Redis, or trips its circuit.
 */
public final class RedisStore {

  private RedisStore() {}

  public static Builder builder() {
    return new Builder();
  }

  /** What a {@link Listener} hears; the detail names the cause or the new state's reason. */
  public enum Event {
    /** Connected, scripts loaded and warmed: Redis answers decisions. Once per store. */
    READY,
    /** A connection attempt failed, at start or while reconnecting; the store keeps trying. */
    CONNECT_FAILED,
    /** Redis refused the credentials (NOAUTH, WRONGPASS): retrying will not help. */
    AUTH_FAILED,
    /** A connection that was up is gone; the store reconnects in the background. */
    CONNECTION_LOST,
    /** Every lost connection is back. */
    CONNECTION_RESTORED,
    /** The circuit opened: calls fail fast (degraded) until probes succeed. */
    CIRCUIT_OPENED,
    /** The circuit lets a few probe calls through. */
    CIRCUIT_HALF_OPEN,
    /** The probes answered: calls go to Redis again. */
    CIRCUIT_CLOSED
  }

  /**
   * Hears the store's events, on the store's own threads (sometimes an I/O thread): keep it
   * short and never block. Nothing is built for events when no listener is set.
   */
  @FunctionalInterface
  public interface Listener {
    void on(Event event, String detail);
  }

  /** Builds a Redis store; each setter validates its argument at once. */
  public static final class Builder {
    Endpoint endpoint = Endpoint.parse("redis://127.0.0.1:6379");
    String keyPrefix = "sluice:";
    long deadlineNanos = Duration.ofMillis(50).toNanos();
    Circuit circuit = Circuit.defaults();
    Store fallback;
    int refusalCacheSize = 10_000;
    int maxInFlight = 1024;
    Ticker ticker = Ticker.system();
    LongSupplier pinnedMicros;
    boolean functions = true;
    Listener listener;
    Duration awaitConnected = Duration.ZERO;
    RedisClient client;
    EventLoopGroup eventLoops;

    private Builder() {}

    /**
     * Where Redis is: {@code redis://[user:password@]host:port[/db]}, {@code rediss://} for TLS,
     * or {@code redis-cluster://host1:port1,host2:port2} (default
     * {@code redis://127.0.0.1:6379}).
     */
    public Builder uri(String uri) {
      this.endpoint = Endpoint.parse(uri);
      return this;
    }

    /** Prepended to every key (default {@code sluice:}); no braces, at most 64 characters. */
    public Builder keyPrefix(String prefix) {
      if (prefix == null || prefix.length() > 64 || prefix.indexOf('{') >= 0
          || prefix.indexOf('}') >= 0) {
        throw new InvalidValueException("keyPrefix", "\"" + prefix + "\"",
            "at most 64 characters, no '{' or '}'");
      }
      this.keyPrefix = prefix;
      return this;
    }

    /** How long one decision may wait for Redis (default 50 ms). */
    public Builder deadline(Duration deadline) {
      this.deadlineNanos = positive(deadline, "deadline", Duration.ofMinutes(1));
      return this;
    }

    /** When the circuit opens and how it closes again (default {@link Circuit#defaults()}). */
    public Builder circuitBreaker(Circuit circuit) {
      if (circuit == null) {
        throw new InvalidValueException("circuitBreaker", "null", "a Circuit");
      }
      this.circuit = circuit;
      return this;
    }

    /**
     * A store that answers while Redis cannot (for example {@code Store.memory(...)}): "fails
     * local" instead of the rules' allow/deny. None by default.
     */
    public Builder fallback(Store fallback) {
      this.fallback = fallback;
      return this;
    }

    /** Entries in the local refusal cache (default 10,000); 0 turns it off. */
    public Builder refusalCacheSize(int entries) {
      if (entries < 0 || entries > 10_000_000) {
        throw new InvalidValueException("refusalCacheSize", Integer.toString(entries),
            "0..10000000");
      }
      this.refusalCacheSize = entries;
      return this;
    }

    /** Decisions that may wait for Redis at once (default 1024); beyond it calls fail fast. */
    public Builder maxInFlight(int calls) {
      if (calls <= 0) {
        throw new InvalidValueException("maxInFlight", Integer.toString(calls), "> 0");
      }
      this.maxInFlight = calls;
      return this;
    }

    /**
     * Connects through the application's own standalone client instead of creating one, and
     * never shuts it down (sluice-redis/README.md, "On the application's client").
     */
    public Builder client(RedisClient client) {
      this.client = client;
      return this;
    }

    /**
     * Opens one more connection on each of these Netty event loops (the caller's own, such as
     * the gateway's), so that a call made on a loop is written, answered and completed on that
     * loop with no thread switch. Calls from any other thread, and every blocking call, use the
     * store's own connection and I/O thread. The loops must outlive the store: close the store
     * first, and never from one of the loops. NIO or epoll loops; standalone Redis only (a
     * cluster keeps the store's own I/O threads). Default: none (sluice-redis/README.md, "On
     * the application's event loops").
     */
    public Builder eventLoops(EventLoopGroup group) {
      if (group != null) {
        for (EventExecutor e : group) {
          if (!(e instanceof EventLoop loop) || LoopClient.channelFor(loop) == null) {
            throw new InvalidValueException("eventLoops", e.getClass().getName(),
                "Netty 4.2 NIO or epoll event loops");
          }
        }
      }
      this.eventLoops = group;
      return this;
    }

    /** Hears when the store is ready, loses Redis or trips its circuit (default: none). */
    public Builder listener(Listener listener) {
      this.listener = listener;
      return this;
    }

    /**
     * Makes {@link #build()} wait up to {@code wait} until the store is ready (connected,
     * scripts loaded and warmed), so the first decisions are not degraded. Past the wait it
     * returns the store, still connecting in the background. A Redis that refuses the
     * credentials makes it throw at once. Default 0: return at once.
     */
    public Builder awaitConnected(Duration wait) {
      if (wait == null || wait.isNegative() || wait.compareTo(Duration.ofMinutes(5)) > 0) {
        throw new InvalidValueException("awaitConnected", String.valueOf(wait), "0..5m");
      }
      this.awaitConnected = wait;
      return this;
    }

    /** The local clock for deadlines, the circuit and the refusal cache. Tests only. */
    Builder ticker(Ticker ticker) {
      this.ticker = ticker;
      return this;
    }

    /**
     * Makes every script use this clock (microseconds) instead of Redis {@code TIME}, so a test
     * can replay a trace. Tests only: production always uses the server's clock.
     */
    Builder pinnedClock(LongSupplier micros) {
      this.pinnedMicros = micros;
      return this;
    }

    /**
     * Whether to use Redis 7 functions when the server has them (default true); false keeps to
     * EVALSHA. Tests only: both paths run the same Lua.
     */
    Builder functions(boolean use) {
      this.functions = use;
      return this;
    }

    /**
     * Returns the store. It connects in the background and is usable at once (decisions are
     * degraded until Redis answers), or, with {@link #awaitConnected}, once it is ready.
     *
     * @throws dev.sluice.core.StoreException when Redis refuses the credentials while
     *     {@code build()} waits
     */
    public Store build() {
      if (client != null && endpoint.cluster()) {
        throw new InvalidValueException("uri", endpoint.toString(),
            "redis:// or rediss:// with a client (a cluster gets the store's own client)");
      }
      if (client != null && eventLoops != null) {
        throw new InvalidValueException("eventLoops", eventLoops.toString(),
            "none with the application's client (its connection has its own threads)");
      }
      LettuceStore store = new LettuceStore(this);
      if (!awaitConnected.isZero()) {
        store.awaitReady(awaitConnected);
      }
      return fallback == null ? store : new FallbackStore(store, fallback);
    }
  }

  private static long positive(Duration d, String name, Duration max) {
    if (d == null || d.isNegative() || d.isZero() || d.compareTo(max) > 0) {
      throw new InvalidValueException(name, String.valueOf(d), "> 0 and <= " + max);
    }
    return d.toNanos();
  }

}
