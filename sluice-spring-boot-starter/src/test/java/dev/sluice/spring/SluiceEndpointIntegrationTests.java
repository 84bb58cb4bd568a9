package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.context.ServletWebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code /actuator/sluice} of a real Boot app on Tomcat: rules, tracked keys, running bans. */
class SluiceEndpointIntegrationTests {

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @RestController
  static class App {
    @GetMapping("/login")
    String login() {
      return "ok";
    }
  }

  @TempDir
  Path dir;

  private final HttpClient client = HttpClient.newHttpClient();

  private HttpResponse<String> get(int port, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void endpoint_showsRules_trackedKeys_andTheBanARefusalStarted() throws Exception {
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, String.join("\n",
        "rules:",
        "  login:",
        "    limits: [{type: fixed-window, limit: 2, window: 1m}]",
        "    ban: 10m",
        "routes:",
        "  - {name: login, paths: [/login], rules: [login]}",
        ""));
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).run(
        "--server.port=0", "--sluice.policy=" + policy,
        "--management.endpoints.web.exposure.include=sluice")) {
      int port = ((ServletWebServerApplicationContext) app).getWebServer().getPort();
      JsonNode before = new ObjectMapper().readTree(get(port, "/actuator/sluice").body());
      assertThat(before.path("activeBans")).isEmpty();
      assertThat(before.path("trackedKeys").asLong()).isZero();

      assertThat(get(port, "/login").statusCode()).isEqualTo(200);
      assertThat(get(port, "/login").statusCode()).isEqualTo(200);
      Instant refused = Instant.now();
      assertThat(get(port, "/login").statusCode()).isEqualTo(429);
      assertThat(get(port, "/login").statusCode()).isEqualTo(429);   // banned: no new ban

      JsonNode s = new ObjectMapper().readTree(get(port, "/actuator/sluice").body());
      assertThat(s.path("rules").path("login").path("ban").asText()).isEqualTo("PT10M");
      assertThat(s.path("store").asText()).isEqualTo("memory");
      assertThat(s.path("trackedKeys").asLong()).isPositive();
      JsonNode bans = s.path("activeBans");
      assertThat(bans).hasSize(1);
      assertThat(bans.get(0).path("rule").asText()).isEqualTo("login");
      // Issue 20 item 10: the endpoint showed "login:127.0.0.1", which the admin API refused.
      assertThat(bans.get(0).path("key").asText()).as("the key text, as the admin API takes it")
          .isEqualTo("127.0.0.1");
      Instant until = Instant.parse(bans.get(0).path("until").asText());
      assertThat(until).isBetween(refused.plus(Duration.ofMinutes(9)),
          refused.plus(Duration.ofMinutes(11)));
    }
  }
}
