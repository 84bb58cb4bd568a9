package dev.sluice.core.policy;

import dev.sluice.core.FakeTicker;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.address.ClientAddressResolver;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.extension.ExtendWith(dev.sluice.core.address.ResolverWarnings.class)
class PolicyTest {

  /** A request as a test writes it. */
  record Req(String method, String path, String peer, Map<String, List<String>> headerMap,
      boolean websocketUpgrade) implements RequestView {

    static Req get(String path) {
      return new Req("GET", path, "192.0.2.1", Map.of(), false);
    }

    Req header(String name, String value) {
      Map<String, List<String>> copy = new HashMap<>(headerMap);
      copy.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(value);
      return new Req(method, path, peer, copy, websocketUpgrade);
    }

    Req from(String address) {
      return new Req(method, path, address, headerMap, websocketUpgrade);
    }

    @Override
    public List<String> headers(String name) {
      return headerMap.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
    }

    @Override
    public String cookie(String name) {
      return null;
    }

    @Override
    public String query(String name) {
      return null;
    }
  }

  private static Rule bucket(String name, int burst, int perMinute) {
    return Rule.builder(name).limit(Limit.tokenBucket(name, burst, perMinute, Duration.ofMinutes(1)))
        .build();
  }

  /** Seed 000's table, in the order that makes first-match right. */
  static Policy seed000(ClientAddressResolver resolver) {
    return Policy.builder()
        .rule(bucket("connect", 120, 240))
        .rule(bucket("read", 120, 240))
        .rule(bucket("analysis", 15, 30))
        .rule(bucket("write", 30, 60))
        .route(Route.builder("health").method("GET").path("/healthz").exempt(true).build())
        .route(Route.builder("connect").websocket(true).rule("connect").build())
        .route(Route.builder("analysis").path("/api/analysis/**").rule("analysis").build())
        .route(Route.builder("read").method("GET").method("HEAD").path("/api/**")
            .path("/records/**").rule("read").build())
        .route(Route.builder("static").method("GET").method("HEAD").build())
        .route(Route.builder("write").rule("write").build())
        .clientAddress(resolver)
        .build();
  }

  private final FakeTicker ticker = new FakeTicker();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 10_000));

  private List<Integer> statuses(Policy policy, Req request, int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(policy.select(request).apply(limiter).allowed() ? 200 : 429);
    }
    return out;
  }

  @Test
  void seed000_checkingIt_429FromThe16thRequest() {
    List<Integer> codes = statuses(seed000(ClientAddressResolver.direct()),
        Req.get("/api/analysis/x"), 20);
    assertThat(codes.subList(0, 15)).containsOnly(200);
    assertThat(codes.subList(15, 20)).containsOnly(429);
  }

  @Test
  void seed000_routes() {
    Policy p = seed000(ClientAddressResolver.direct());
    assertThat(p.select(Req.get("/healthz")).exempt()).isTrue();
    assertThat(p.select(Req.get("/api/records/1")).route()).isEqualTo("read");
    assertThat(p.select(Req.get("/records/7")).route()).isEqualTo("read");
    assertThat(p.select(Req.get("/api/analysis/x")).route()).isEqualTo("analysis");
    assertThat(p.select(Req.get("/index.html")).rules()).isEmpty();
    assertThat(p.select(new Req("POST", "/api/records", "192.0.2.1", Map.of(), false)).route())
        .isEqualTo("write");
    assertThat(p.select(new Req("GET", "/ws", "192.0.2.1", Map.of(), true)).route())
        .isEqualTo("connect");
  }

  @Test
  void pathSpellings_cannotSlipPastAPattern() {
    Policy p = seed000(ClientAddressResolver.direct());
    for (String path : List.of("//api/analysis/x", "/api/./analysis/x", "/static/../api/analysis/x",
        "/%61pi/analysis/x", "/api/analysis/x/")) {
      assertThat(p.select(Req.get(path)).route()).as(path).isEqualTo("analysis");
    }
  }

  @Test
  void healthz_afterManyRequests_isStillExempt() {
    Policy p = seed000(ClientAddressResolver.direct());
    statuses(p, Req.get("/api/analysis/x"), 1000);
    assertThat(statuses(p, Req.get("/healthz"), 1000)).containsOnly(200);
  }

  @Test
  void seed004_spoofingVectors_withOneTrustedHop() {
    Policy p = Policy.builder()
        .rule(Rule.builder("global").limit(Limit.fixedWindow("global", 2, Duration.ofMinutes(1)))
            .build())
        .global("global")
        .clientAddress(ClientAddressResolver.builder().trustedHops(1).build())
        .build();
    Req lb = Req.get("/graphql").from("10.0.0.2");
    assertThat(p.select(lb.header("X-Forwarded-For", "a.a.a.a, 7.7.7.7")).apply(limiter).allowed())
        .isTrue();
    assertThat(p.select(lb.header("X-Forwarded-For", "b.b.b.b, 7.7.7.7")).apply(limiter).allowed())
        .isTrue();
    assertThat(p.select(lb.header("X-Forwarded-For", "c.c.c.c, 7.7.7.7")).apply(limiter).allowed())
        .isFalse();
    // Another client behind the same load balancer has its own bucket.
    assertThat(p.select(lb.header("X-Forwarded-For", "8.8.8.8")).apply(limiter).allowed())
        .isTrue();
  }

  @Test
  void spoofedXff_fromAnUntrustedPeer_isIgnored() {
    Policy p = seed000(ClientAddressResolver.direct());
    java.util.Random random = new java.util.Random(4);
    int allowed = 0;
    for (int i = 0; i < 1000; i++) {
      String spoof = random.nextInt(256) + "." + random.nextInt(256) + ".0.1";
      if (p.select(Req.get("/api/analysis/x").from("198.51.100.5")
          .header("X-Forwarded-For", spoof)).apply(limiter).allowed()) {
        allowed++;
      }
    }
    assertThat(allowed).isEqualTo(15);
  }

  @Test
  void headerDimension_keysPerParticipant_notPerVenue() {
    // Seed 002: 60 phones behind one pub address, polling 30 per minute per participant.
    Policy p = Policy.builder()
        .rule(Rule.builder("poll").key("participant")
            .limit(Limit.slidingWindow("poll", 30, Duration.ofMinutes(1))).build())
        .dimension("participant", Source.header("X-Participant"))
        .route(Route.builder("poll").path("/api/session/*/state").rule("poll").build())
        .build();
    for (int phone = 0; phone < 60; phone++) {
      Req poll = Req.get("/api/session/42/state").from("203.0.113.99")
          .header("X-Participant", "p" + phone);
      assertThat(statuses(p, poll, 6)).containsOnly(200);
    }
    Req anonymous = Req.get("/api/session/42/state").from("203.0.113.99");
    assertThat(statuses(p, anonymous, 31)).as("no participant: the shared bucket")
        .containsOnlyOnce(429);
  }

  @Test
  void buildErrors_nameTheMissingPiece() {
    assertThatThrownBy(() -> Policy.builder()
        .route(Route.builder("r").rule("nope").build()).build())
        .hasMessage("rule : 'nope' in route 'r' (expected: one of [])");
    assertThatThrownBy(() -> Policy.builder()
        .rule(Rule.builder("x").key("session").limit(Limit.fixedWindow("w", 1,
            Duration.ofSeconds(1))).build())
        .global("x").build())
        .hasMessage("key : 'session' in rule 'x' (expected: a declared dimension, one of [ip])");
  }
}
