package dev.sluice.redis;

import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
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
 *     .build();
 * RateLimiter limiter = RateLimiter.of(store);
 * }</pre>
 *
 * <h2>One round trip per decision</h2>
 * A check is one {@code EVALSHA} when all its keys share a hash slot: always on a standalone
 * server, and on a cluster for every single-rule check (all limits of a rule, its ban and its
 * sliding logs are stored under the hash tag {@code {<rule key>}}). A check over rules whose keys
 * land on different cluster slots runs one script per slot in parallel, each consuming only if
 * its own enforcing rules allow; if any slot refused, the slots that consumed are refunded at
 * once (consume-then-refund). A refusal therefore consumes nothing once the call returns;
 * between the consume and the refund, concurrent calls may see less allowance than there is,
 * never more. A refund that cannot reach Redis leaves the allowance spent (errs on refusing).
 *
 * <h2>Time</h2>
 * Redis counts microseconds (the Java stores count nanoseconds): durations in rules are rounded
 * up to whole microseconds, and returned durations are microseconds times 1000.
 *
 * <h2>Failures</h2>
 * Each call has a deadline; past it, on a connection error, when the circuit is open or when too
 * many calls are pending, the store throws {@link dev.sluice.core.StoreException} (the rate
 * limiter applies each rule's on-store-error outcome and marks the decision degraded), or, with
 * a {@linkplain Builder#fallback fallback store}, answers from it. The store starts without Redis
 * and connects in the background.
 */
public final class RedisStore {

  private RedisStore() {}

  public static Builder builder() {
    return new Builder();
  }

  /** Builds a Redis store; each setter validates its argument at once. */
  public static final class Builder {
    Endpoint endpoint = Endpoint.parse("redis://127.0.0.1:6379");
    String keyPrefix = "sluice:";
    long deadlineNanos = Duration.ofMillis(50).toNanos();
    int failureThreshold = 5;
    long openNanos = Duration.ofSeconds(1).toNanos();
    Store fallback;
    int refusalCacheSize = 10_000;
    int maxInFlight = 1024;
    Ticker ticker = Ticker.system();
    LongSupplier pinnedMicros;
    boolean functions = true;

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
        throw new IllegalArgumentException("keyPrefix : \"" + prefix
            + "\" (expected: at most 64 characters, no '{' or '}')");
      }
      this.keyPrefix = prefix;
      return this;
    }

    /** How long one decision may wait for Redis (default 50 ms). */
    public Builder deadline(Duration deadline) {
      this.deadlineNanos = positive(deadline, "deadline", Duration.ofMinutes(1));
      return this;
    }

    /**
     * Opens the circuit after {@code failures} consecutive failures, for {@code openFor}
     * (defaults 5 and 1 s); then single probes decide whether to close it.
     */
    public Builder circuitBreaker(int failures, Duration openFor) {
      if (failures <= 0) {
        throw new IllegalArgumentException("failures : " + failures + " (expected: > 0)");
      }
      this.failureThreshold = failures;
      this.openNanos = positive(openFor, "openFor", Duration.ofSeconds(4));
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
        throw new IllegalArgumentException(
            "refusalCacheSize : " + entries + " (expected: 0..10000000)");
      }
      this.refusalCacheSize = entries;
      return this;
    }

    /** Calls that may wait for Redis at once (default 1024); beyond it calls fail fast. */
    public Builder maxInFlight(int calls) {
      if (calls <= 0) {
        throw new IllegalArgumentException("maxInFlight : " + calls + " (expected: > 0)");
      }
      this.maxInFlight = calls;
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

    /** Returns the store; it connects in the background and is usable at once. */
    public Store build() {
      return new LettuceStore(this);
    }

    private static long positive(Duration d, String name, Duration max) {
      if (d == null || d.isNegative() || d.isZero() || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(
            name + " : " + d + " (expected: > 0 and <= " + max + ")");
      }
      return d.toNanos();
    }
  }
}
