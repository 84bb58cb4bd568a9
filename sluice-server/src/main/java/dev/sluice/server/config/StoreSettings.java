package dev.sluice.server.config;

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
 * @param circuit when to stop asking a failing remote store
 */
public record StoreSettings(
    String uri,
    int maxKeys,
    String keyPrefix,
    Duration deadline,
    boolean localFallback,
    CircuitSettings circuit) {

  /** Settings with the default circuit. */
  public StoreSettings(String uri, int maxKeys, String keyPrefix, Duration deadline,
      boolean localFallback) {
    this(uri, maxKeys, keyPrefix, deadline, localFallback, CircuitSettings.defaults());
  }

  public static StoreSettings defaults() {
    return new StoreSettings("memory", 1_000_000, "sluice:", Duration.ofMillis(50), false,
        CircuitSettings.defaults());
  }

  /** These settings with another URI (the --store flag and SLUICE_STORE win over the file). */
  public StoreSettings withUri(String uri) {
    return new StoreSettings(uri, maxKeys, keyPrefix, deadline, localFallback, circuit);
  }
}
