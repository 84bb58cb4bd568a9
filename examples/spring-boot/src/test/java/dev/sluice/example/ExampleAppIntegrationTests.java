package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;

/** The example app, started on a random port, over real HTTP. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class ExampleAppIntegrationTests {

  @Value("${local.server.port}")
  int port;

  private final HttpClient client = HttpClient.newHttpClient();

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void hello_isLimitedByThePolicy_withTheGatewaysAnswer() throws Exception {
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> ok = get("/api/hello");
      assertThat(ok.statusCode()).as(ok.body() + ok.headers().map()).isEqualTo(200);
    }
    HttpResponse<String> r = get("/api/hello", "Origin", "https://app.example.com");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.body()).startsWith("{\"error\":\"too many requests\",\"retryAfter\":12,");
    assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=60");
    assertThat(r.headers().firstValue("Access-Control-Allow-Origin"))
        .hasValue("https://app.example.com");
  }

  @Test
  void rateLimitedMethod_isKeyedBySpel() throws Exception {
    HttpResponse<String> first = get("/api/orders/1", "X-Tenant", "a");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(get("/api/orders/2", "X-Tenant", "a").statusCode()).isEqualTo(200);
    HttpResponse<String> r = get("/api/orders/3", "X-Tenant", "a");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.body()).contains("\"rule\":\"orders\"");
    assertThat(get("/api/orders/1", "X-Tenant", "b").statusCode()).isEqualTo(200);
  }

  @Test
  void actuator_showsTheMeters_theStore_andTheRules() throws Exception {
    get("/api/hello");
    String prometheus = get("/actuator/prometheus").body();
    assertThat(prometheus).contains("sluice_decisions_total{", "rule=\"api\"",
        "sluice_decision_latency_seconds_bucket");
    HttpResponse<String> health = get("/actuator/health");
    assertThat(health.body()).contains("\"sluice\":{\"status\":\"UP\"");
    assertThat(get("/actuator/sluice").body()).contains("\"orders\"", "\"trackedKeys\"");
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
