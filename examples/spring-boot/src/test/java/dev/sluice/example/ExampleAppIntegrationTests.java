package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.servlet.SluiceFilter;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The example app, started on a random port, over real HTTP. The tests share one app and its
 * in-memory counters, so each test is its own client: the policy trusts the loopback proxy, and
 * each test names its client in {@code X-Forwarded-For} (and its own tenants).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class ExampleAppIntegrationTests {

  private static final String ORIGIN = "https://app.example.com";

  @Value("${local.server.port}")
  int port;

  @Autowired
  ServletContext servletContext;

  private final HttpClient client = HttpClient.newHttpClient();

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Each call spends one token: the fifth is the last 200, the sixth the first 429. */
  @Test
  void hello_spendsOneTokenPerCall_sixthCallIsTheFirst429() throws Exception {
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> ok = get("/api/hello", "X-Forwarded-For", "203.0.113.1");
      assertThat(ok.statusCode()).as("call %d: %s %s", i + 1, ok.body(), ok.headers().map())
          .isEqualTo(200);
      assertThat(ok.headers().firstValue("X-RateLimit-Remaining")).hasValue(
          Integer.toString(4 - i));
    }
    HttpResponse<String> r = get("/api/hello", "X-Forwarded-For", "203.0.113.1",
        "Origin", ORIGIN);
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.body()).startsWith("{\"error\":\"too many requests\",\"retryAfter\":12,")
        .endsWith(",\"rule\":\"api\"}");
    assertThat(r.headers().firstValue("Retry-After")).hasValue("12");
    assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=60");
    assertThat(r.headers().firstValue("Access-Control-Allow-Origin")).hasValue(ORIGIN);
  }

  /**
   * Regression: the tests once shared 127.0.0.1's bucket, so whichever test called /api/hello
   * first (JUnit's order is by method name hash) left the count test a 429 on its fifth call,
   * which looked like the filter counting twice. Another client's calls spend nothing of ours.
   */
  @Test
  void anotherClientsCalls_spendNothingOfThisClientsBucket() throws Exception {
    for (int i = 0; i < 6; i++) {
      get("/api/hello", "X-Forwarded-For", "203.0.113.2");
    }
    HttpResponse<String> first = get("/api/hello", "X-Forwarded-For", "203.0.113.3");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");
  }

  @Test
  void theFilterIsRegisteredOnce() {
    List<String> sluice = servletContext.getFilterRegistrations().values().stream()
        .map(FilterRegistration::getClassName)
        .filter(SluiceFilter.class.getName()::equals).toList();
    assertThat(sluice).hasSize(1);
  }

  /**
   * Regression: {@code @PathVariable String id} needs the compiler's {@code -parameters} (as
   * Boot's parent pom sets); without it every call to the method was a 500.
   */
  @Test
  void rateLimitedMethod_isLimitedPerSpelKey_withTheFiltersRefusal() throws Exception {
    for (String tenant : List.of("acme", "globex")) {
      for (int i = 1; i <= 2; i++) {
        HttpResponse<String> ok = get("/api/orders/" + i, "X-Tenant", tenant);
        assertThat(ok.statusCode()).as(tenant + " " + i + ": " + ok.body()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("{\"order\":\"" + i + "\"}");
        assertThat(ok.headers().firstValue("X-RateLimit-Remaining"))
            .hasValue(Integer.toString(2 - i));
      }
      HttpResponse<String> r = get("/api/orders/3", "X-Tenant", tenant, "Origin", ORIGIN);
      assertThat(r.statusCode()).as(tenant).isEqualTo(429);
      assertThat(r.body()).startsWith("{\"error\":\"too many requests\",\"retryAfter\":")
          .endsWith(",\"rule\":\"orders\"}");
      assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"orders\";q=2;w=60");
      assertThat(r.headers().firstValue("Access-Control-Allow-Origin")).hasValue(ORIGIN);
    }
    // The method's refusal carries the same headers as the filter's.
    for (int i = 0; i < 6; i++) {
      get("/api/hello", "X-Forwarded-For", "203.0.113.4");
    }
    HttpResponse<String> byFilter = get("/api/hello", "X-Forwarded-For", "203.0.113.4",
        "Origin", ORIGIN);
    HttpResponse<String> byMethod = get("/api/orders/4", "X-Tenant", "acme", "Origin", ORIGIN);
    assertThat(byMethod.statusCode()).isEqualTo(byFilter.statusCode()).isEqualTo(429);
    assertThat(headerNames(byMethod)).isEqualTo(headerNames(byFilter));
    assertThat(byMethod.headers().firstValue("Content-Type"))
        .isEqualTo(byFilter.headers().firstValue("Content-Type"));
  }

  private static Set<String> headerNames(HttpResponse<?> r) {
    Set<String> names = new TreeSet<>(r.headers().map().keySet());
    names.remove("date");
    return names;
  }

  @Test
  void actuator_showsTheMeters_theStore_andTheRules() throws Exception {
    get("/api/hello", "X-Forwarded-For", "203.0.113.5");
    String prometheus = get("/actuator/prometheus").body();
    assertThat(prometheus).contains("sluice_decisions_total{", "rule=\"api\"",
        "sluice_decision_latency_seconds_bucket");
    HttpResponse<String> health = get("/actuator/health");
    assertThat(health.body()).contains("\"sluice\":{\"status\":\"UP\"");
    assertThat(get("/actuator/sluice").body()).contains("\"orders\"", "\"trackedKeys\"");
  }

  /** Issue 20, item 11: @RateLimited decisions went past the filter's listeners (no meters). */
  @Test
  void issue20_rateLimitedMethod_isCountedInTheMeters_likeTheFilter() throws Exception {
    get("/api/orders/1", "X-Tenant", "initech");
    get("/api/orders/2", "X-Tenant", "initech");
    get("/api/orders/3", "X-Tenant", "initech");
    String prometheus = get("/actuator/prometheus").body();
    assertThat(prometheus.lines().filter(l -> l.startsWith("sluice_decisions_total{")
        && l.contains("rule=\"orders\"") && l.contains("outcome=\"refused\"")))
        .isNotEmpty().allSatisfy(l -> assertThat(Double.parseDouble(l.substring(
            l.lastIndexOf(' ') + 1))).isGreaterThanOrEqualTo(1));
  }

  @Test
  void badPolicy_failsStartUp_namingFileLineAndField() throws Exception {
    Path bad = Files.createTempFile("policy", ".yaml");
    Files.writeString(bad, "rules:\n  api:\n    limits: [{type: fixed-window, limit: 0, "
        + "window: 1m}]\n");
    assertThatThrownBy(() -> new SpringApplicationBuilder(ExampleApplication.class)
        .run("--server.port=0", "--sluice.policy=" + bad).close())
        .hasStackTraceContaining(bad + ":3: rules.api.limits[0].limit : 0 (expected: a whole "
            + "number > 0)");
  }
}
