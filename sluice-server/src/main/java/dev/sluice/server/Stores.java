package dev.sluice.server;

import dev.sluice.core.Store;
import dev.sluice.redis.RedisStore;
import dev.sluice.policy.StoreSettings;
import dev.sluice.server.log.Logging;
import java.util.List;

/** Opens the store a policy's {@code store:} section (or {@code --store}) names. */
final class Stores {

  /**
   * Lettuce's loggers that repeat themselves while Redis is away: a warning per connection
   * every 5 s ("Cannot reconnect to ..."), per node on every topology refresh ("Unable to
   * connect to ..."), an INFO per reconnect. The store logs each outage itself, once when it
   * starts and once when it ends, and counts the attempts in between
   * ({@code sluice_store_connect_failures_total}); Lettuce's errors still show.
   */
  private static final List<String> QUIETED = List.of(
      "io.lettuce.core.protocol.ConnectionWatchdog",
      "io.lettuce.core.protocol.ReconnectionHandler",
      "io.lettuce.core.cluster.topology.DefaultClusterTopologyRefresh");

  private Stores() {}

  /**
   * Opens the store; a Redis store reports to {@code health} and connects in the background.
   *
   * @throws IllegalArgumentException with a message a person can act on, when it cannot be opened
   */
  static Store open(StoreSettings settings, RedisStore.Listener health) {
    String uri = settings.uri();
    if (settings.local()) {
      return settings.memory();
    }
    if (uri.startsWith("redis://") || uri.startsWith("rediss://")
        || uri.startsWith("redis-cluster://")) {
      QUIETED.forEach(l -> Logging.quiet(l, Log.Level.ERROR));
      return settings.redis().listener(health).build();
    }
    throw new IllegalArgumentException("store : " + dev.sluice.core.Secrets.mask(uri)
        + " (expected: memory, redis://HOST:PORT, rediss://HOST:PORT or redis-cluster://H1:P1,H2:P2)");
  }

  static String describe(StoreSettings settings) {
    return settings.uri().equals("memory")
        ? "memory (max " + settings.maxKeys() + " keys, per process)"
        : dev.sluice.policy.PolicyLoader.redact(settings.uri()) + " (prefix "
            + settings.keyPrefix() + ", deadline " + settings.deadline().toMillis() + "ms, "
            + (settings.localFallback() ? "local memory fallback" : "each rule's onStoreError")
            + " while Redis fails)";
  }
}
