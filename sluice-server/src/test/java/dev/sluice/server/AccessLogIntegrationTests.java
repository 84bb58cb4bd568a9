package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: the access log, end to end: a policy file with {@code logging:}, the real gateway
 * and its demo upstream on loopback, the JDK's HTTP client, and the file the log writes.
 */
class AccessLogIntegrationTests {

  @TempDir
  Path dir;

  final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  SluiceServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  HttpResponse<String> send(String method, String path, String body) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + path)).timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The file's lines once it has {@code n}, waiting for the writer thread at most 10 s. */
  static List<String> awaitLines(Path file, int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<String> lines = List.of();
    while (System.nanoTime() < deadline) {
      lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
      if (lines.size() >= n) {
        return lines;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll, not a timed wait
    }
    throw new AssertionError("expected " + n + " lines in " + file + ", got " + lines);
  }

  @Test
  void json_eachExchangeIsOneLine_withRouteRuleOutcomeStatusBytesAndUpstreamTime()
      throws Exception {
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, String.join("\n",
        "rules:",
        "  api: {limits: [{type: fixed-window, limit: 2, window: 1m}]}",
        "  watch: {mode: shadow, limits: [{type: fixed-window, limit: 1, window: 1m}]}",
        "routes:",
        "  - {name: api, paths: [/api/**], rules: [api]}",
        "  - {name: watched, paths: [/watched/**], rules: [watch]}",
        "gateway: {maxBodyBytes: 16}",
        "logging: {access: json, accessFile: logs/access.log}",
        ""));
    server = SluiceServer.start(Main.parseServe(List.of("--config", policy.toString(),
        "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"), Map.of()), Map.of(),
        new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8)));

    assertThat(send("GET", "/api/a?x=1", null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/api/a", null).statusCode()).isEqualTo(200);
    HttpResponse<String> refused = send("GET", "/api/a", null);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(send("GET", "/watched/x", null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/watched/x", null).statusCode()).isEqualTo(200);
    assertThat(send("POST", "/api/upload", "x".repeat(100)).statusCode()).isEqualTo(413);
    assertThat(send("GET", "/healthz", null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/elsewhere", null).statusCode()).isEqualTo(200);

    List<String> lines = awaitLines(dir.resolve("logs/access.log"), 8);
    assertThat(lines).hasSize(8).allSatisfy(l -> assertThat(l)
        .startsWith("{\"ts\":\"").contains("\"client\":\"127.0.0.1\""));
    assertThat(lines.get(0)).contains("\"method\":\"GET\",\"path\":\"/api/a?x=1\","
        + "\"status\":200,").contains("\"route\":\"api\",\"rule\":\"api\",\"outcome\":\"allowed\"")
        .containsPattern("\"upstream_ms\":[0-9]+\\.[0-9]{3},\"start\":\"[-0-9T:]+\\.[0-9]{6}Z\","
            + "\"protocol\":\"HTTP/1.1\",\"peer\":\"127.0.0.1\",\"host\":\"127.0.0.1:[0-9]+\"")
        .doesNotContain("\"bytes\":0,");
    assertThat(lines.get(2)).contains("\"status\":429,\"bytes\":"
        + refused.body().getBytes(StandardCharsets.UTF_8).length + ",")
        .contains("\"route\":\"api\",\"rule\":\"api\",\"outcome\":\"refused\",\"upstream_ms\":null,");
    assertThat(lines.get(3)).contains("\"route\":\"watched\",\"rule\":\"watch\","
        + "\"outcome\":\"allowed\"");
    assertThat(lines.get(4)).contains("\"route\":\"watched\",\"rule\":\"watch\","
        + "\"outcome\":\"shadow-refused\"");
    assertThat(lines.get(5)).contains("\"method\":\"POST\",\"path\":\"/api/upload\","
        + "\"status\":413,").contains("\"outcome\":\"invalid\",\"upstream_ms\":null,");
    // /healthz is the upstream's path like any other (issue 20); a path no route matches has
    // no route and no rule.
    assertThat(lines.get(6)).contains("\"path\":\"/healthz\",\"status\":200,");
    assertThat(lines.get(7)).contains("\"path\":\"/elsewhere\",\"status\":200,")
        .contains("\"route\":null,\"rule\":null,\"outcome\":\"allowed\"");
    assertThat(logBytes.toString(StandardCharsets.UTF_8))
        .contains("INFO  access log format=json file=" + dir.resolve("logs/access.log"));
    assertThat(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.adminPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body())
        .contains("sluice_access_log_dropped_total 0.0");
  }
}
