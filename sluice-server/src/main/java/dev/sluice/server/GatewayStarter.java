package dev.sluice.server;

import dev.sluice.core.RateLimiter;
import dev.sluice.server.config.ServerConfig;
import dev.sluice.server.gateway.Gateway;
import dev.sluice.server.gateway.GatewayEvents;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.function.Supplier;

/** Starts the data path; a seam so the command can be tested apart from the gateway. */
@FunctionalInterface
interface GatewayStarter {

  /** A running gateway. */
  interface Running extends AutoCloseable {
    int port();

    @Override
    void close();
  }

  Running start(InetSocketAddress listen, URI upstream, Supplier<ServerConfig> config,
      RateLimiter limiter, GatewayEvents events) throws Exception;

  /**
   * I/O threads with a remote store. A decision waits for its Redis round trip on the I/O thread
   * (bounded by the store's deadline), so more threads keep one slow answer from holding up the
   * other connections of its thread; with the in-memory store Netty's default (twice the cores)
   * is right.
   */
  int REMOTE_STORE_THREADS = Math.max(16, 4 * Runtime.getRuntime().availableProcessors());

  /** The Netty gateway of {@code dev.sluice.server.gateway}. */
  static GatewayStarter netty() {
    return (listen, upstream, config, limiter, events) -> {
      boolean remote = !"memory".equals(config.get().store().uri());
      Gateway gateway = Gateway.builder().listen(listen).upstream(upstream).config(config)
          .limiter(limiter).events(events).threads(remote ? REMOTE_STORE_THREADS : 0).start();
      return new Running() {
        @Override
        public int port() {
          return gateway.port();
        }

        @Override
        public void close() {
          gateway.close();
        }
      };
    };
  }
}
