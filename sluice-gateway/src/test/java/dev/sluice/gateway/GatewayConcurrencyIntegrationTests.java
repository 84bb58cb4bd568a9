package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Many clients at once: every request answered, limits exact, nothing stuck. */
class GatewayConcurrencyIntegrationTests {

  private Fixtures.Harness h;
  private EchoUpstream echo;
  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() throws Exception {
    echo = new EchoUpstream();
    h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()), echo.uri());
  }

  @AfterEach
  void stop() {
    h.close();
    echo.close();
  }

  @Test
  void concurrentRequests_allAnswered_andTheLimitIsExact() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      String path = i % 2 == 0 ? "/static/" + i : "/api/analysis/" + i;
      futures.add(client.sendAsync(HttpRequest.newBuilder(h.uri(path))
          .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()));
    }
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    int ok = 0;
    int refused = 0;
    for (int i = 0; i < futures.size(); i++) {
      HttpResponse<String> r = futures.get(i).get();
      if (i % 2 == 0) {
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("uri=/static/" + i + "\n");
      } else if (r.statusCode() == 200) {
        ok++;
        assertThat(r.body()).contains("uri=/api/analysis/" + i + "\n");
      } else {
        assertThat(r.statusCode()).isEqualTo(429);
        refused++;
      }
    }
    assertThat(ok).isEqualTo(15);
    assertThat(refused).isEqualTo(185);
  }
}
