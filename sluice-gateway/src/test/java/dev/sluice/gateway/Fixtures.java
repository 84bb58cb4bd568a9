package dev.sluice.gateway;

import dev.sluice.core.Limit;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.policy.Route;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.policy.CorsSettings;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.ResponseSettings;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.StoreSettings;
import dev.sluice.policy.WebSocketSettings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import dev.sluice.core.Decision;

/** Policies, configs and a gateway harness shared by the gateway's integration tests. */
public final class Fixtures {

  private Fixtures() {}

  /** A ticker the test moves by hand, starting near overflow to prove only differences count. */
  public static final class FakeTicker implements Ticker {
    private final AtomicLong now = new AtomicLong(Long.MAX_VALUE - Duration.ofHours(1).toNanos());

    @Override
    public long read() {
      return now.get();
    }

    public void advance(Duration d) {
      now.addAndGet(d.toNanos());
    }
  }

  /** Seed 000's table, built in the test. */
  public static Policy seed000() {
    return seed000Builder().build();
  }

  public static Policy.Builder seed000Builder() {
    return Policy.builder()
        .rule(Rule.builder("connect").limit(Limit.tokenBucket("connect", 120, 240, Duration.ofMinutes(1))).build())
        .rule(Rule.builder("read").limit(Limit.tokenBucket("read", 120, 240, Duration.ofMinutes(1))).build())
        .rule(Rule.builder("analysis").limit(Limit.tokenBucket("analysis", 15, 30, Duration.ofMinutes(1))).build())
        .rule(Rule.builder("write").limit(Limit.tokenBucket("write", 30, 60, Duration.ofMinutes(1))).build())
        .route(Route.builder("healthz").path("/healthz").exempt(true).build())
        .route(Route.builder("connect").websocket(true).rule("connect").build())
        .route(Route.builder("analysis").path("/api/analysis/**").rule("analysis").build())
        .route(Route.builder("read").method("GET").method("HEAD").path("/api/**").path("/records/**").rule("read").build())
        .route(Route.builder("write").method("POST").method("PUT").method("PATCH").method("DELETE").rule("write").build());
  }

  public static PolicyConfig config(Policy policy) {
    return PolicyConfig.of(policy);
  }

  public static PolicyConfig withGateway(PolicyConfig c, GatewaySettings g) {
    return c.withGateway(g);
  }

  public static PolicyConfig withCors(PolicyConfig c, CorsSettings cors) {
    return c.withCors(cors);
  }

  public static PolicyConfig withResponse(PolicyConfig c, ResponseSettings r) {
    return c.withResponse(r);
  }

  public static PolicyConfig withWebSocket(PolicyConfig c, WebSocketSettings w) {
    return c.withWebSocket(w);
  }

  /** Records what the gateway reports. */
  public static final class RecordingEvents implements GatewayEvents {
    final List<String> decisions = new CopyOnWriteArrayList<>();
    final List<Decision> decisionValues = new CopyOnWriteArrayList<>();
    final List<Integer> closes = new CopyOnWriteArrayList<>();
    final java.util.concurrent.BlockingQueue<Integer> closeQueue =
        new java.util.concurrent.LinkedBlockingQueue<>();
    final List<Integer> generated = new CopyOnWriteArrayList<>();
    final List<String> upstreamFailures = new CopyOnWriteArrayList<>();
    final List<String> failures = new CopyOnWriteArrayList<>();
    final AtomicLong opened = new AtomicLong();
    final List<String> moderated = new CopyOnWriteArrayList<>();
    final List<String> allowlisted = new CopyOnWriteArrayList<>();
    final List<String> delayed = new CopyOnWriteArrayList<>();
    /** Each request's one verdict, as {@code route verdict} ({@code -} for no route). */
    final List<String> verdicts = new CopyOnWriteArrayList<>();

    @Override
    public void verdict(String route, dev.sluice.core.policy.RequestVerdict verdict) {
      verdicts.add((route == null ? "-" : route) + " " + verdict.label());
    }

    @Override
    public void allowlisted(String kind) {
      allowlisted.add(kind);
    }

    @Override
    public void delayed(String kind, String rule) {
      delayed.add(rule);
    }

    @Override
    public void moderated(String surface, String reason) {
      moderated.add(surface + ":" + reason);
    }

    @Override
    public void decision(String kind, List<Rule> rules, Decision decision, long nanos) {
      decisions.add(kind + ":" + (decision.allowed() ? "allowed" : "refused")
          + (decision.shadowRefused() ? ":shadow=" + decision.shadowRule() : ""));
      decisionValues.add(decision);
    }

    @Override
    public void webSocketOpened() {
      opened.incrementAndGet();
    }

    @Override
    public void webSocketClosed(int code) {
      closes.add(code);
      closeQueue.add(code);
    }

    @Override
    public void generated(int status) {
      generated.add(status);
    }

    @Override
    public void upstreamFailed(int status, String upstream, String cause) {
      upstreamFailures.add(status + " " + upstream + " " + cause);
    }

    @Override
    public void decisionFailed(String kind, List<dev.sluice.core.Rule> rules,
        Throwable error) {
      failures.add(kind + " " + rules.stream().map(dev.sluice.core.Rule::name).toList() + " "
          + error.getClass().getSimpleName());
    }
  }

  /** A started gateway with its clock, limiter, config holder and events. */
  public static final class Harness implements AutoCloseable {
  public   final FakeTicker ticker = new FakeTicker();
  public   final RateLimiter limiter;
    final AtomicReference<PolicyConfig> config;
    final RecordingEvents events = new RecordingEvents();
  public   final Gateway gateway;

    public Harness(PolicyConfig config, URI upstream) {
      this(config, upstream, null);
    }

    /** A gateway deciding with {@code limiter}, or with an in-memory store when it is null. */
    public Harness(PolicyConfig config, URI upstream, RateLimiter limiter) {
      this(config, upstream, limiter, 2);
    }

    /** The same on {@code threads} I/O loops. */
    public Harness(PolicyConfig config, URI upstream, RateLimiter limiter, int threads) {
      this.limiter = limiter != null ? limiter : RateLimiter.of(Store.memory(ticker, 10_000));
      this.config = new AtomicReference<>(config);
      this.gateway = Gateway.builder()
          .listen(new InetSocketAddress("127.0.0.1", 0))
          .upstream(upstream)
          .config(this.config::get)
          .limiter(this.limiter)
          .events(events)
          .ticker(ticker)
          .threads(threads)
          .start();
    }

    public Harness(PolicyConfig config) {
      this(config, null);
    }

    public URI uri(String path) {
      return URI.create("http://127.0.0.1:" + gateway.port() + path);
    }

    public URI ws(String path) {
      return URI.create("ws://127.0.0.1:" + gateway.port() + path);
    }

    @Override
    public void close() {
      gateway.close();
    }
  }
}
