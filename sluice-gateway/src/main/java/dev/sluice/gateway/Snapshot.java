package dev.sluice.gateway;

import dev.sluice.core.RateLimiter;
import dev.sluice.core.policy.Admission;
import dev.sluice.core.policy.DelayGate;
import dev.sluice.core.policy.HumanVerifier;
import dev.sluice.core.policy.Policy;
import dev.sluice.netty.CorsHeaders;
import dev.sluice.netty.HttpRateLimitSettings;
import dev.sluice.netty.WebSocketGuardSettings;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.LoggingSettings;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.WebSocketSettings;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One {@link PolicyConfig} translated into the handlers' settings. Built once per config object,
 * so a reload that swaps the config swaps every setting at the same instant.
 */
final class Snapshot {

  private static final System.Logger LOG = System.getLogger(Snapshot.class.getName());

  final PolicyConfig config;
  final GatewaySettings gateway;
  final CorsHeaders cors;
  final HttpRateLimitSettings http;
  final WebSocketGuardSettings ws;
  final Moderation moderation;
  /** Whether exchanges are written to the access log. */
  final boolean accessLog;
  /** {@code trust.clientHeaders} as lower-case ASCII, for the relay's head. */
  final byte[][] clientHeaders;
  /** The admission step of this policy: the relay's, and the HTTP/2 streams' through {@link #http}. */
  final Admission admission;

  private Snapshot(PolicyConfig config, RateLimiter limiter, GatewayEvents events,
      DelayGate delays, HumanVerifier verifier, Moderation.Cache moderations) {
    this.config = config;
    this.gateway = config.gateway() == null ? GatewaySettings.defaults() : config.gateway();
    this.cors = CorsHeaders.of(config.responses().cors());
    WebSocketSettings w = config.websocket() == null ? WebSocketSettings.defaults()
        : config.websocket();
    Policy policy = config.policy();
    this.http = HttpRateLimitSettings.newBuilder(policy)
        .responses(config.responses())
        .refuseWebSocketBeforeUpgrade(w.refuseBeforeUpgrade())
        .delays(delays)
        .verifier(verifier)
        .build();
    this.admission = Admission.builder().limiter(limiter).policy(policy)
        .responses(http.responses()).listener(events).delays(delays).verifier(verifier)
        .reservationTtl(reservationTtl(config.gateway())).build();
    this.ws = webSocket(policy, w);
    this.moderation = moderations.of(config.moderation());
    this.accessLog = config.logging().access() != LoggingSettings.Access.OFF;
    this.clientHeaders = config.trust().clientHeaders().stream().map(HeadWriter::ascii)
        .toArray(byte[][]::new);
  }

  /**
   * How long a reservation outlives a gateway that never settles it (it crashed): past the
   * longest exchange that still waits for an answer (connecting, then the response timeout).
   */
  static java.time.Duration reservationTtl(GatewaySettings g) {
    return g.upstreamConnectTimeout().plus(g.upstreamResponseTimeout())
        .plus(java.time.Duration.ofMinutes(1));
  }

  static Snapshot of(PolicyConfig config, RateLimiter limiter, GatewayEvents events,
      DelayGate delays) {
    return of(config, limiter, events, delays, null, new Moderation.Cache());
  }

  static Snapshot of(PolicyConfig config, RateLimiter limiter, GatewayEvents events,
      DelayGate delays, HumanVerifier verifier, Moderation.Cache moderations) {
    if (config == null || config.policy() == null) {
      throw new IllegalArgumentException("config : " + config + " (expected: a config with a policy)");
    }
    return new Snapshot(config, limiter, events, delays, verifier, moderations);
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
    private final Supplier<PolicyConfig> config;
    private final RateLimiter limiter;
    private final GatewayEvents events;
    /** Kept across reloads: requests waiting for their token keep their slots. */
    private final DelayGate delays = DelayGate.create(DelayGate.DEFAULT_MAX_WAITING);
    private volatile Snapshot last;
    private volatile PolicyConfig failed;
    /** Human checks' siteverify client, one per gateway: kept across reloads. */
    private final HumanVerifier verifier;
    private final Moderation.Cache moderations;

    Source(Supplier<PolicyConfig> config, RateLimiter limiter, GatewayEvents events) {
      this(config, limiter, events, new Moderation.Cache());
    }

    Source(Supplier<PolicyConfig> config, RateLimiter limiter, GatewayEvents events,
        Moderation.Cache moderations) {
      this.config = config;
      this.limiter = limiter;
      this.events = events;
      this.verifier = new SiteVerify(java.time.Clock.systemUTC());
      this.moderations = moderations;
      this.last = Snapshot.of(config.get(), limiter, events, delays, verifier, moderations);
    }

    @Override
    public Snapshot get() {
      Snapshot s = last;
      PolicyConfig c = config.get();
      if (c == s.config || c == failed) {
        return s;
      }
      try {
        s = Snapshot.of(c, limiter, events, delays, verifier, moderations);
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
