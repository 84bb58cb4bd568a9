package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Reloads racing requests: each exchange runs under one config snapshot, pinned by the front
 * handler when its head arrives, so its body cap (front handler) and its limits (rate-limit
 * handler) always come from the same policy.
 */
class GatewayReloadRaceIntegrationTests {

  /** Policy "a" caps bodies at 100 bytes, policy "b" at 10,000; each names its own rule. */
  private static PolicyConfig config(String rule, long maxBody) {
    Policy policy = Policy.builder()
        .rule(Rule.builder(rule).limit(Limit.fixedWindow(rule, 1_000_000, Duration.ofHours(1)))
            .build())
        .route(Route.builder("all").rule(rule).build())
        .build();
    GatewaySettings d = GatewaySettings.defaults();
    return Fixtures.withGateway(Fixtures.config(policy), d.toBuilder()
        .maxBodyBytes(maxBody).build());
  }

  @Test
  void reloadsRacingRequests_everyResponseBelongsToExactlyOnePolicy() throws Exception {
    PolicyConfig a = config("a", 100);
    PolicyConfig b = config("b", 10_000);
    try (EchoUpstream upstream = new EchoUpstream();
        Fixtures.Harness h = new Fixtures.Harness(a, upstream.uri())) {
      AtomicBoolean flipping = new AtomicBoolean(true);
      Thread flipper = new Thread(() -> {
        boolean toB = true;
        while (flipping.get()) {
          h.config.set(toB ? b : a);
          toB = !toB;
          Thread.onSpinWait();
        }
      });
      flipper.start();
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      String body = "x".repeat(500);
      int refusedByA = 0;
      int passedByB = 0;
      List<String> mixed = new ArrayList<>();
      try {
        for (int round = 0; round < 40; round++) {
          List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
          for (int i = 0; i < 50; i++) {
            sent.add(client.sendAsync(HttpRequest.newBuilder(h.uri("/api/x"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString()));
          }
          for (CompletableFuture<HttpResponse<String>> f : sent) {
            HttpResponse<String> r = f.get();
            String policy = r.headers().firstValue("ratelimit-policy").orElse("");
            if (r.statusCode() == 413) {
              refusedByA++;
            } else if (r.statusCode() == 200 && policy.startsWith("\"b\"")) {
              passedByB++;
            } else {
              mixed.add(r.statusCode() + " " + policy);
            }
          }
        }
      } finally {
        flipping.set(false);
        flipper.join();
      }
      assertThat(mixed).as("a body cap from one policy, limits from the other").isEmpty();
      assertThat(refusedByA).as("both policies served requests").isPositive();
      assertThat(passedByB).isPositive();
    }
  }
}
