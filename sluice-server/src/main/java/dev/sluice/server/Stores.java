package dev.sluice.server;

import dev.sluice.core.Store;
import dev.sluice.redis.RedisStore;
import dev.sluice.policy.StoreSettings;
import dev.sluice.server.log.Logging;
import io.netty.channel.EventLoopGroup;
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

  /**
   * A standalone Redis store puts a connection on each of the gateway's I/O loops
   * (sluice-redis/README.md) unless {@code -Dsluice.redis.eventLoops=false}: on a quiet machine
   * it served 1.38x the requests of the store's own I/O thread (docs/bench/gateway.md, issue 9,
   * run D).
   */
  static final String ON_LOOPS = "sluice.redis.eventLoops";

  static boolean onLoops() {
    return Boolean.parseBoolean(System.getProperty(ON_LOOPS, "true"));
  }

  private Stores() {}

  /**
   * Opens the store; a Redis store reports to {@code health}, connects in the background, and
   * with {@code loops} (the gateway's when {@link #onLoops}, else null) puts a connection on
   * each of them, so that the gateway's decisions never leave their loop.
   *
   * @throws IllegalArgumentException with a message a person can act on, when it cannot be opened
   */
  static Store open(StoreSettings settings, RedisStore.Listener health, EventLoopGroup loops) {
    String uri = settings.uri();
    if (settings.local()) {
      return settings.memory();
    }
    if (uri.startsWith("redis://") || uri.startsWith("rediss://")
        || uri.startsWith("redis-cluster://")) {
      QUIETED.forEach(l -> Logging.quiet(l, Log.Level.ERROR));
      return RedisStore.builder().uri(uri).keyPrefix(settings.keyPrefix())
          .deadline(settings.deadline()).circuitBreaker(settings.circuit())
          .fallback(settings.localFallback() ? settings.memory() : null)
          .listener(health).eventLoops(loops).build();
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
