package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.policy.ResponseSettings;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 13's policy features through the gateway with a real client: routes by host, header
 * and client network, the allow list, the dry-run switch, delay instead of refuse, and the JSON
 * body template.
 */
class GatewayPolicyFeaturesIntegrationTests {

  private Fixtures.Harness h;
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
  }

  private static Rule one(String name) {
    return Rule.builder(name).limit(Limit.fixedWindow(name, 1, Duration.ofMinutes(1))).build();
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(h.uri(path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private List<Integer> statuses(int n, String path, String... headers) throws Exception {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(get(path, headers).statusCode());
    }
    return out;
  }

  @Test
  void allowListedClient_isNeverLimited_andCounted() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(one("backstop"))
        .global("backstop").allow(List.of("127.0.0.0/8", "::1")).build()));
    assertThat(statuses(5, "/x")).containsOnly(200);
    assertThat(h.events.allowlisted).containsExactly("http", "http", "http", "http", "http");
    assertThat(h.events.decisions).isEmpty();
  }

  @Test
  void clientOutsideTheAllowList_isLimited() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(one("backstop"))
        .global("backstop").allow(List.of("10.0.0.0/8")).build()));
    assertThat(statuses(3, "/x")).containsExactly(200, 429, 429);
    assertThat(h.events.allowlisted).isEmpty();
  }

  @Test
  void routeFrom_matchesTheClientNetwork() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(one("local")).rule(one("far"))
        .route(Route.builder("far").from(List.of("10.0.0.0/8")).rule("far").build())
        .route(Route.builder("local").from(List.of("127.0.0.1")).path("/api/**").rule("local")
            .build())
        .build()));
    assertThat(statuses(2, "/api/x")).containsExactly(200, 429);
    // No route matches elsewhere: no rule, never limited.
    assertThat(statuses(3, "/other")).containsOnly(200);
  }

  @Test
  void routeByHeaderValue() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(one("v2"))
        .route(Route.builder("v2").header("X-Api-Version", "2").rule("v2").build()).build()));
    assertThat(statuses(3, "/x", "X-Api-Version", "1")).containsOnly(200);
    assertThat(statuses(2, "/x", "X-Api-Version", "2")).containsExactly(200, 429);
  }

  @Test
  void routeByHost_portIgnored() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(one("api"))
        .route(Route.builder("api").host("api.example.com").rule("api").build()).build()));
    List<Integer> codes = new ArrayList<>();
    for (String host : List.of("www.example.com", "api.example.com:8080", "API.example.com",
        "www.example.com")) {
      try (RawHttp raw = new RawHttp(h.gateway.port())) {
        raw.send("GET /x HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
        codes.add(RawHttp.status(raw.readResponse()));
      }
    }
    assertThat(codes).containsExactly(200, 200, 429, 200);
  }

  @Test
  void dryRun_neverRefuses_butDecidesAsShadow() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(one("backstop"))
        .global("backstop").dryRun(true).build()));
    HttpResponse<String> last = null;
    for (int i = 0; i < 4; i++) {
      last = get("/x");
      assertThat(last.statusCode()).isEqualTo(200);
    }
    assertThat(h.events.decisions).containsExactly("http:allowed",
        "http:allowed:shadow=backstop", "http:allowed:shadow=backstop",
        "http:allowed:shadow=backstop");
    // As for any shadow rule: no limit headers a client would back off from.
    assertThat(last.headers().firstValue("X-RateLimit-Limit")).isEmpty();
  }

  @Test
  void jsonBodyTemplate_forA429() throws Exception {
    h = new Fixtures.Harness(Fixtures.withResponse(Fixtures.config(Policy.builder()
        .rule(one("backstop")).global("backstop").build()), new ResponseSettings(true, true,
            null, 503, null, null, null,
            "{\"error\":\"slow down\",\"retryAfter\":{{retryAfter}},\"rule\":{{rule}},"
                + "\"limit\":{{limit}}}", null)));
    get("/x");
    HttpResponse<String> r = get("/x");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("application/json"));
    assertThat(r.body()).isEqualTo(
        "{\"error\":\"slow down\",\"retryAfter\":60,\"rule\":\"backstop\",\"limit\":1}");
    // A browser still gets the page.
    HttpResponse<String> page = get("/x", "Accept", "text/html");
    assertThat(page.body()).startsWith("<!doctype html>");
  }

  /** 10 per second, burst 1, delay 500 ms, on the real clock: the event loop's timers wait. */
  private void delayPolicy() {
    Rule api = Rule.builder("api").limit(Limit.tokenBucket("api", 1, 10, Duration.ofSeconds(1)))
        .delay(Duration.ofMillis(500)).build();
    RateLimiter limiter = RateLimiter.of(Store.memory(Ticker.system(), 10_000));
    h = new Fixtures.Harness(Fixtures.config(Policy.builder().rule(api).global("api").build()),
        null, limiter);
  }

  private record Timed(int status, long millis) {}

  private List<Timed> concurrently(int n) {
    List<CompletableFuture<Timed>> futures = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      futures.add(client.sendAsync(HttpRequest.newBuilder(h.uri("/x"))
              .timeout(Duration.ofSeconds(10)).GET().build(),
          HttpResponse.BodyHandlers.ofString())
          .thenApply(r -> new Timed(r.statusCode(), (System.nanoTime() - start) / 1_000_000)));
    }
    return futures.stream().map(CompletableFuture::join).toList();
  }

  @Test
  void delay_fiveConcurrent_noneRefused_someAnsweredLater() throws Exception {
    delayPolicy();
    List<Timed> results = concurrently(5);
    assertThat(results).extracting(Timed::status).containsOnly(200);
    // Four waited for a token due 100, 200, 300 and 400 ms after the first.
    assertThat(results.stream().filter(t -> t.millis() >= 90).count()).isGreaterThanOrEqualTo(3);
    assertThat(h.events.delayed).isNotEmpty().containsOnly("api");
  }

  @Test
  void delay_twentyConcurrent_theExcessIs429() throws Exception {
    delayPolicy();
    List<Timed> results = concurrently(20);
    long ok = results.stream().filter(t -> t.status() == 200).count();
    long refused = results.stream().filter(t -> t.status() == 429).count();
    assertThat(ok + refused).isEqualTo(20);
    // About 1 + 500 ms / 100 ms = 6 tokens fit in the delay (more if the requests arrive spread
    // out); at most 16 may wait per key, so at least 20 - 1 - 16 are refused at once.
    assertThat(ok).isBetween(5L, 12L);
    assertThat(refused).isGreaterThanOrEqualTo(8);
  }
}
