package dev.sluice.server;

import dev.sluice.core.RateLimiter;
import dev.sluice.server.config.ServerConfig;
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
      Class<?> gateway;
      try {
        gateway = Class.forName("dev.sluice.server.gateway.Gateway");
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("the gateway is not built in this version");
      }
      Object g;
      try {
        g = gateway.getMethod("start", InetSocketAddress.class, URI.class, Supplier.class,
            RateLimiter.class, GatewayEvents.class)
            .invoke(null, listen, upstream, config, limiter, events);
      } catch (java.lang.reflect.InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Exception ex) {
          throw ex;
        }
        throw new IllegalStateException(cause);
      }
      java.lang.reflect.Method port = gateway.getMethod("port");
      java.lang.reflect.Method close = gateway.getMethod("close");
      return new Running() {
        @Override
        public int port() {
          try {
            return (int) port.invoke(g);
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
          }
        }

        @Override
        public void close() {
          try {
            close.invoke(g);
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
          }
        }
      };
    };
  }
}
