package dev.sluice.server;

import dev.sluice.core.RateLimiter;
import dev.sluice.gateway.DecisionApi;
import dev.sluice.gateway.Gateway;
import dev.sluice.gateway.GatewayEvents;
import dev.sluice.gateway.Moderation;
import dev.sluice.gateway.ServerTls;
import dev.sluice.policy.PolicyConfig;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
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

  /**
   * Starts the gateway on {@code loops} (made by {@link Gateway#eventLoops}), left running;
   * {@code moderations} holds the sections the server's loads built.
   */
  Running start(InetSocketAddress listen, URI upstream, Supplier<PolicyConfig> config,
      RateLimiter limiter, GatewayEvents events, EventLoopGroup loops, DecisionApi api, Tls tls,
      Moderation.Cache moderations) throws Exception;

  /** The listener's certificate (null: plain HTTP) and the https upstream's trust and SNI. */
  record Tls(ServerTls server, Path upstreamCa, String upstreamSni) {
    static final Tls NONE = new Tls(null, null, null);
  }

  /**
   * The Netty gateway of {@code dev.sluice.gateway}. Its handlers never wait for a store
   * on an I/O thread, so the default of one thread per core suits Redis as well.
   */
  static GatewayStarter netty() {
    return (listen, upstream, config, limiter, events, loops, api, tls, moderations) -> {
      Gateway gateway = Gateway.builder().listen(listen).upstream(upstream).config(config)
          .limiter(limiter).events(events).eventLoops(loops).decisionApi(api)
          .tls(tls.server()).upstreamCa(tls.upstreamCa()).upstreamSni(tls.upstreamSni())
          .moderations(moderations).start();
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
