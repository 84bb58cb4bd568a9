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

  /** The Netty gateway of {@code dev.sluice.server.gateway}. */
  static GatewayStarter netty() {
    return (listen, upstream, config, limiter, events) -> {
      Gateway gateway = Gateway.start(listen, upstream, config, limiter, events);
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
