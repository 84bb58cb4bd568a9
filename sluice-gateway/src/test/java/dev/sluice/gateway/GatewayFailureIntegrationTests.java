package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.FailingStore;
import dev.sluice.core.Cooldown;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Verdict;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 7 through the real gateway: an outage of the limiter is not a limit, a check that throws
 * is decided by the rules' onStoreError, and a shadow rule tells clients nothing.
 */
class GatewayFailureIntegrationTests {

  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private Fixtures.Harness h;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(h.uri(path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private static Policy payments(long capacity, long cost) {
    return Policy.builder()
        .rule(Rule.builder("payments")
            .limit(Limit.fixedWindow("payments", capacity, Duration.ofMinutes(1)))
            .onStoreError(OnStoreError.DENY).build())
        .rule(Rule.builder("api").limit(Limit.fixedWindow("api", 100, Duration.ofMinutes(1)))
            .build())
        .route(Route.builder("payments").path("/pay/**").rule("payments").cost(cost).build())
        .route(Route.builder("api").path("/api/**").rule("api").build())
        .build();
  }

  @Test
  void storeOutage_failClosedRule_is503_failOpenRule_passes() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(payments(10, 1)), null,
        RateLimiter.of(new FailingStore()));
    HttpResponse<String> refused = get("/pay/1");
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(refused.body())
        .isEqualTo("{\"error\":\"rate limiter unavailable\",\"retryAfter\":1}");
    assertThat(get("/api/1").statusCode()).isEqualTo(200);
    assertThat(h.events.generated).containsExactly(503);
  }

  @Test
  void throwingCheck_isDecidedByOnStoreError_andReported() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(payments(5, 10)));
    for (int i = 0; i < 3; i++) {
      assertThat(get("/pay/1").statusCode()).isEqualTo(503);
    }
    assertThat(h.events.failures).containsExactly(
        "http [payments] InvalidValueException", "http [payments] InvalidValueException",
        "http [payments] InvalidValueException");
    assertThat(h.events.decisions).isEmpty();
  }

  @Test
  void shadowOnlyRequest_carriesNoLimitHeaders() throws Exception {
    Policy shadow = Policy.builder()
        .rule(Rule.builder("edge").limit(Limit.tokenBucket("edge", 1, 1, Duration.ofMinutes(1)))
            .mode(Mode.SHADOW).build())
        .global("edge")
        .build();
    h = new Fixtures.Harness(Fixtures.config(shadow));
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = get("/x");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().map().keySet()).as("request " + i)
          .doesNotContain("x-ratelimit-remaining", "x-ratelimit-limit", "ratelimit",
              "ratelimit-policy");
    }
    assertThat(h.events.decisions).containsExactly("http:allowed",
        "http:allowed:shadow=edge", "http:allowed:shadow=edge");
  }
}
