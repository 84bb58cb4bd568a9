package dev.sluice.server;

import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.config.StoreSettings;

/** Opens the store a policy's {@code store:} section (or {@code --store}) names. */
final class Stores {

  private Stores() {}

  /**
   * Opens the store.
   *
   * @throws IllegalArgumentException with a message a person can act on, when it cannot be opened
   */
  static Store open(StoreSettings settings) {
    String uri = settings.uri();
    if (uri.equals("memory")) {
      return Store.memory(Ticker.system(), settings.maxKeys());
    }
    if (uri.startsWith("redis://") || uri.startsWith("rediss://")
        || uri.startsWith("redis-cluster://")) {
      return RedisStore.builder()
          .uri(uri)
          .keyPrefix(settings.keyPrefix())
          .deadline(settings.deadline())
          .circuitBreaker(settings.circuit().failures(), settings.circuit().open())
          .fallback(settings.localFallback()
              ? Store.memory(Ticker.system(), settings.maxKeys()) : null)
          .build();
    }
    throw new IllegalArgumentException("store : " + uri
        + " (expected: memory, redis://HOST:PORT, rediss://HOST:PORT or redis-cluster://H1:P1,H2:P2)");
  }

  static String describe(StoreSettings settings) {
    return settings.uri().equals("memory")
        ? "memory (max " + settings.maxKeys() + " keys, per process)"
        : dev.sluice.server.config.PolicyLoader.redact(settings.uri()) + " (prefix "
            + settings.keyPrefix() + ", deadline " + settings.deadline().toMillis() + "ms, "
            + (settings.localFallback() ? "local memory fallback" : "each rule's onStoreError")
            + " while Redis fails)";
  }
}
