package dev.sluice.server.gateway;

import dev.sluice.core.policy.Policy;
import dev.sluice.netty.CorsHeaders;
import dev.sluice.netty.HttpRateLimitSettings;
import dev.sluice.netty.WebSocketGuardSettings;
import dev.sluice.server.config.CorsSettings;
import dev.sluice.server.config.GatewaySettings;
import dev.sluice.server.config.ModerationSettings;
import dev.sluice.server.config.ResponseSettings;
import dev.sluice.server.config.ServerConfig;
import dev.sluice.server.config.WebSocketSettings;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One {@link ServerConfig} translated into the handlers' settings. Built once per config object,
 * so a reload that swaps the config swaps every setting at the same instant.
 */
final class Snapshot {

  private static final System.Logger LOG = System.getLogger(Snapshot.class.getName());

  final ServerConfig config;
  final GatewaySettings gateway;
  final CorsHeaders cors;
  final HttpRateLimitSettings http;
  final WebSocketGuardSettings ws;
  final ModerationSettings moderation;

  private Snapshot(ServerConfig config) {
    this.config = config;
    this.gateway = config.gateway() == null ? GatewaySettings.defaults() : config.gateway();
    this.cors = cors(config.cors());
    ResponseSettings response = config.response() == null ? ResponseSettings.defaults()
        : config.response();
    WebSocketSettings w = config.websocket() == null ? WebSocketSettings.defaults()
        : config.websocket();
    Policy policy = config.policy();
    this.http = HttpRateLimitSettings.newBuilder(policy)
        .rateLimitHeaders(response.rateLimitHeaders())
        .ietfHeaders(response.ietfHeaders())
        .htmlTemplate(response.htmlTemplate())
        .unavailableStatus(response.unavailableStatus())
        .unavailableHtmlTemplate(response.unavailableHtmlTemplate())
        .limitPreflights(config.cors() != null && config.cors().limitPreflights())
        .cors(cors)
        .refuseWebSocketBeforeUpgrade(w.refuseBeforeUpgrade())
        .build();
    this.ws = webSocket(policy, w);
    this.moderation = config.moderation();
  }

  static Snapshot of(ServerConfig config) {
    if (config == null || config.policy() == null) {
      throw new IllegalArgumentException("config : " + config + " (expected: a config with a policy)");
    }
    return new Snapshot(config);
  }

  private static CorsHeaders cors(CorsSettings c) {
    if (c == null) {
      return CorsHeaders.disabled();
    }
    return CorsHeaders.of(c.allowOrigins(), c.allowMethods(), c.allowHeaders(), c.exposeHeaders(),
        c.allowCredentials(), c.maxAge());
  }

  private static WebSocketGuardSettings webSocket(Policy policy, WebSocketSettings w) {
    WebSocketGuardSettings.Builder b = WebSocketGuardSettings.newBuilder(policy)
        .maxConnectionsPerIp(w.maxConnectionsPerIp())
        .maxConnectionsUnknown(w.maxConnectionsUnknown())
        .maxConnectionsPerSession(w.maxConnectionsPerSession())
        .maxMessageBytes(w.maxFrameBytes())
        .maxFragments(w.maxFragments())
        .closeTimeout(w.closeTimeout())
        .flood(w.floodBurst(), w.floodPerSecond())
        .actionField(w.actionField())
        .refuseBeforeUpgrade(w.refuseBeforeUpgrade());
    if (w.sessionDimension() != null) {
      b.sessionDimension(w.sessionDimension());
    }
    if (w.strikes() > 0) {
      b.strikes(w.strikes(), w.strikeWindow());
    }
    if (w.actionRules() != null) {
      for (Map.Entry<String, String> e : w.actionRules().entrySet()) {
        b.actionRule(e.getKey(), e.getValue());
      }
    }
    return b.build();
  }

  /** Reads the current config, translating it only when it changed. */
  static final class Source implements Supplier<Snapshot> {
    private final Supplier<ServerConfig> config;
    private volatile Snapshot last;
    private volatile ServerConfig failed;

    Source(Supplier<ServerConfig> config) {
      this.config = config;
      this.last = Snapshot.of(config.get());
    }

    @Override
    public Snapshot get() {
      Snapshot s = last;
      ServerConfig c = config.get();
      if (c == s.config || c == failed) {
        return s;
      }
      try {
        s = Snapshot.of(c);
      } catch (RuntimeException e) {
        // The config loader validates before swapping; if something still slips through, keep
        // serving with the settings that worked.
        failed = c;
        LOG.log(System.Logger.Level.WARNING, "gateway: new configuration not applied: " + e);
        return s;
      }
      last = s;
      return s;
    }
  }
}
