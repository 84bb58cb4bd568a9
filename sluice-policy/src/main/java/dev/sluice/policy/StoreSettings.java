package dev.sluice.policy;

import dev.sluice.core.Circuit;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import java.time.Duration;

/**
 * Where counters live.
 *
 * @param uri {@code memory} (default), {@code redis://...}, {@code rediss://...} or
 *     {@code redis-cluster://h1:p1,h2:p2}
 * @param maxKeys in-memory key cap (default 1,000,000)
 * @param keyPrefix Redis key prefix (default {@code sluice:})
 * @param deadline per-decision deadline for a remote store (default 50 ms)
 * @param localFallback serve from memory while the remote store is failing (default false)
 * @param circuit when to stop asking a failing remote store (core's {@link Circuit}, the Redis
 *     store's spec too, so its defaults and rules are written once); whoever opens the store (the
 *     server, the Spring Boot starter) hands these values to the Redis store's builder
 * @param startupWait how long {@code sluice serve} waits for a remote store to be ready before
 *     the gateway accepts traffic anyway (default 10 s)
 */
public record StoreSettings(
    String uri,
    int maxKeys,
    String keyPrefix,
    Duration deadline,
    boolean localFallback,
    Circuit circuit,
    Duration startupWait) {

  public static final Duration DEFAULT_STARTUP_WAIT = Duration.ofSeconds(10);

  public static StoreSettings defaults() {
    return new StoreSettings("memory", 1_000_000, "sluice:", Duration.ofMillis(50), false,
        Circuit.defaults(), DEFAULT_STARTUP_WAIT);
  }

  /** These settings with another URI (the --store flag and SLUICE_STORE win over the file). */
  public StoreSettings withUri(String uri) {
    return new StoreSettings(uri, maxKeys, keyPrefix, deadline, localFallback, circuit,
        startupWait);
  }

  /** True for a store that lives in this process and is ready at once. */
  public boolean local() {
    return uri.equals("memory");
  }

  /** The in-memory store these settings describe (also the Redis store's local fallback). */
  public Store memory() {
    return Store.memory(Ticker.system(), maxKeys);
  }
}
