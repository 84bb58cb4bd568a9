package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.CorsSettings;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.ResponseSettings;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The gateway over HTTP with the built-in demo upstream and seed 000's policy. */
class GatewayHttpIntegrationTests {

  private Fixtures.Harness h;
  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() {
    h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()));
  }

  @AfterEach
  void stop() {
    h.close();
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(h.uri(path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void seed000Loop_fifteenPass_thenRefused() throws Exception {
    List<Integer> codes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      codes.add(get("/api/analysis/x").statusCode());
    }
    assertThat(codes.subList(0, 15)).allSatisfy(c -> assertThat(c).isNotEqualTo(429));
    assertThat(codes.subList(0, 15)).containsOnly(200);
    assertThat(codes.subList(15, 20)).containsOnly(429);
  }

  @Test
  void allowedResponse_comesFromUpstream_withLimitHeaders() throws Exception {
    HttpResponse<String> r = get("/api/analysis/x");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("\"upstream\":\"sluice demo\"").contains("\"path\":\"/api/analysis/x\"");
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).hasValue("15");
    assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue("14");
    // one token spent, refilled at one per 2 s
    assertThat(r.headers().firstValue("X-RateLimit-Reset")).hasValue("2");
    assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"analysis\";q=15;w=30");
    assertThat(r.headers().firstValue("RateLimit")).hasValue("\"analysis\";r=14;t=2");
  }

  @Test
  void refusal_hasExactHeaders_andJsonBody() throws Exception {
    for (int i = 0; i < 15; i++) {
      get("/api/analysis/x");
    }
    HttpResponse<String> r = get("/api/analysis/x");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
    assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("application/json"));
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).hasValue("15");
    assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
    assertThat(r.headers().firstValue("X-RateLimit-Reset")).hasValue("30");
    assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"analysis\";q=15;w=30");
    assertThat(r.headers().firstValue("RateLimit")).hasValue("\"analysis\";r=0;t=2");
    assertThat(r.body()).isEqualTo(
        "{\"error\":\"too many requests\",\"retryAfter\":2,\"retryAfterMs\":2000,\"rule\":\"analysis\"}");
  }

  @Test
  void refusal_afterTimePasses_isAllowedAgain() throws Exception {
    for (int i = 0; i < 15; i++) {
      get("/api/analysis/x");
    }
    assertThat(get("/api/analysis/x").statusCode()).isEqualTo(429);
    h.ticker.advance(Duration.ofMillis(1999));
    assertThat(get("/api/analysis/x").statusCode()).isEqualTo(429);
    h.ticker.advance(Duration.ofMillis(1));
    assertThat(get("/api/analysis/x").statusCode()).isEqualTo(200);
  }

  @Test
  void refusal_forBrowser_isHtml() throws Exception {
    for (int i = 0; i < 15; i++) {
      get("/api/analysis/x");
    }
    HttpResponse<String> r = get("/api/analysis/x", "Accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("text/html"));
    assertThat(r.body()).contains("Too many requests").contains("wait 2 seconds")
        .contains("analysis");
    HttpResponse<String> json = get("/api/analysis/x", "Accept", "application/json, text/html;q=0.5");
    assertThat(json.body()).startsWith("{\"error\":\"too many requests\"");
  }

  @Test
  void refusal_withHtmlTemplate_usesIt() throws Exception {
    h.config.set(Fixtures.withResponse(h.config.get(),
        new ResponseSettings(true, true, "<p>slow down: {{rule}} for {{retryAfter}}s</p>")));
    for (int i = 0; i < 15; i++) {
      get("/api/analysis/x");
    }
    HttpResponse<String> r = get("/api/analysis/x", "Accept", "text/html");
    assertThat(r.body()).isEqualTo("<p>slow down: analysis for 2s</p>");
  }

  @Test
  void headerFamilies_canBeSwitchedOff() throws Exception {
    h.config.set(Fixtures.withResponse(h.config.get(), new ResponseSettings(false, true, null)));
    HttpResponse<String> r = get("/api/analysis/x");
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).isEmpty();
    assertThat(r.headers().firstValue("RateLimit-Policy")).isPresent();
    h.config.set(Fixtures.withResponse(h.config.get(), new ResponseSettings(true, false, null)));
    r = get("/api/analysis/x");
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).isPresent();
    assertThat(r.headers().firstValue("RateLimit-Policy")).isEmpty();
    assertThat(r.headers().firstValue("RateLimit")).isEmpty();
  }

  @Test
  void healthPath_optedIn_afterThousandRequests_isStill200() throws Exception {
    h.config.set(h.config.get().withGateway(GatewaySettings.builder().healthPath("/healthz").build()));
    for (int i = 0; i < 1000; i++) {
      get("/api/analysis/x");
    }
    HttpResponse<String> r = get("/healthz");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}");
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).isEmpty();
  }

  /**
   * Issue 20, item 1: the gateway took GET /healthz away from the upstream app that may have
   * that path. By default it answers no path of its own.
   */
  @Test
  void issue20_healthz_byDefault_isTheUpstreamsPath() throws Exception {
    HttpResponse<String> r = get("/healthz");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("\"upstream\":\"sluice demo\"", "\"path\":\"/healthz\"");
  }

  @Test
  void cors_onRefusal() throws Exception {
    h.config.set(Fixtures.withCors(h.config.get(), new CorsSettings(
        List.of("https://explorer.example.com"), List.of("GET"), List.of(), List.of(), false,
        Duration.ofMinutes(10))));
    for (int i = 0; i < 15; i++) {
      get("/api/analysis/x", "Origin", "https://explorer.example.com");
    }
    HttpResponse<String> r = get("/api/analysis/x", "Origin", "https://explorer.example.com");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Access-Control-Allow-Origin"))
        .hasValue("https://explorer.example.com");
    assertThat(r.headers().firstValue("Access-Control-Expose-Headers")).hasValueSatisfying(
        v -> assertThat(v).contains("Retry-After").contains("RateLimit"));
    HttpResponse<String> other = get("/api/analysis/x", "Origin", "https://evil.example");
    assertThat(other.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
  }

  @Test
  void otherGets_areNotLimited() throws Exception {
    for (int i = 0; i < 200; i++) {
      assertThat(get("/static/app.js").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void events_reportDecisions() throws Exception {
    for (int i = 0; i < 16; i++) {
      get("/api/analysis/x");
    }
    assertThat(h.events.decisions).hasSize(16);
    assertThat(h.events.decisions.get(15)).isEqualTo("http:refused");
    assertThat(h.events.generated).containsExactly(429);
  }
}
