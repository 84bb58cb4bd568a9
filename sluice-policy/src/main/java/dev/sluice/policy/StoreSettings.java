package dev.sluice.policy;

import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.redis.RedisStore;
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
 * @param circuit when to stop asking a failing remote store (the Redis store's own spec, so its
 *     defaults and rules are written once)
 * @param startupWait how long {@code sluice serve} waits for a remote store to be ready before
 *     the gateway accepts traffic anyway (default 10 s)
 */
public record StoreSettings(
    String uri,
    int maxKeys,
    String keyPrefix,
    Duration deadline,
    boolean localFallback,
    RedisStore.Circuit circuit,
    Duration startupWait) {

  public static final Duration DEFAULT_STARTUP_WAIT = Duration.ofSeconds(10);

  public static StoreSettings defaults() {
    return new StoreSettings("memory", 1_000_000, "sluice:", Duration.ofMillis(50), false,
        RedisStore.Circuit.defaults(), DEFAULT_STARTUP_WAIT);
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

  /**
   * A Redis store builder with these settings (URI, key prefix, deadline, circuit, fallback), so
   * the gateway and the Spring Boot starter open the same store from the same section; each adds
   * how it waits for the store and who hears about it.
   */
  public RedisStore.Builder redis() {
    return RedisStore.builder()
        .uri(uri)
        .keyPrefix(keyPrefix)
        .deadline(deadline)
        .circuitBreaker(circuit)
        .fallback(localFallback ? memory() : null);
  }
}
