package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.context.ServletWebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of the example app, each with its own Tomcat on a random port, on one real
 * redis-server ({@code sluice.store}): they share one limit exactly. On Redis the filter goes
 * asynchronous (the ASYNC dispatch passes through it again), so an exact count also shows a
 * request is charged once.
 */
class SharedRedisIntegrationTests {

  private static RedisProcess redis;

  private final HttpClient client = HttpClient.newHttpClient();

  @BeforeAll
  static void startRedis() {
    redis = RedisProcess.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  private static ConfigurableApplicationContext instance() {
    return new SpringApplicationBuilder(ExampleApplication.class)
        .run("--server.port=0", "--sluice.store=" + redis.uri());
  }

  private static int port(ConfigurableApplicationContext app) {
    return ((ServletWebServerApplicationContext) app).getWebServer().getPort();
  }

  @Test
  void twoInstances_onOneRedis_shareTheLimitExactly() throws Exception {
    try (ConfigurableApplicationContext a = instance();
        ConfigurableApplicationContext b = instance()) {
      int[] ports = {port(a), port(b)};
      assertThat(ports[0]).isNotEqualTo(ports[1]);
      List<String> seen = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + ports[i % 2] + "/api/hello"))
            .header("X-Forwarded-For", "198.51.100.7").build(),
            HttpResponse.BodyHandlers.ofString());
        seen.add(r.statusCode() + ":" + r.headers().firstValue("X-RateLimit-Remaining")
            .orElse("-"));
      }
      // burst 5 between the two: 4..0 left, alternating instances, then refusals on both
      assertThat(seen).containsExactly("200:4", "200:3", "200:2", "200:1", "200:0",
          "429:0", "429:0", "429:0", "429:0", "429:0", "429:0", "429:0");
    }
  }
}
