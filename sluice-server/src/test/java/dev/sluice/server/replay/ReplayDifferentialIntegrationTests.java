package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.PolicyLoader;
import dev.sluice.server.Log;
import dev.sluice.server.ServeOptions;
import dev.sluice.server.SluiceServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replay against the live gateway: traffic through a real {@code sluice serve} (its demo
 * upstream, its JSON access log), then the log replayed with the same policy file; every
 * request's decision (outcome and rule) must be the one the gateway logged. The policy has every
 * kind of rule the log can show: a token bucket, a sliding window, a fixed window with a ban, a
 * shadow sliding log, a global backstop, and a trusted proxy hop, so the client comes from the
 * logged X-Forwarded-For.
 */
class ReplayDifferentialIntegrationTests {

  @TempDir
  Path dir;

  @Test
  void replay_decidesEveryRequestAsTheGatewayDid() throws Exception {
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, String.join("\n",
        "trust: {hops: 1}",
        "rules:",
        "  analysis: {limits: [{type: token-bucket, burst: 5, refill: 60, period: 1m}]}",
        "  read: {limits: [{type: sliding-window, limit: 4, window: 10s}]}",
        "  login: {limits: [{type: fixed-window, limit: 3, window: 1m}], ban: 1m}",
        "  watch: {mode: shadow, limits: [{type: sliding-log, limit: 4, window: 10s}]}",
        "  backstop: {limits: [{type: fixed-window, limit: 60, window: 1m}]}",
        "routes:",
        "  - {name: analysis, paths: [/api/analysis/**], rules: [analysis]}",
        "  - {name: login, methods: [POST], paths: [/login], rules: [login]}",
        "  - {name: watched, paths: [/watched/**], rules: [watch]}",
        "  - {name: read, methods: [GET], paths: [/api/**], rules: [read]}",
        "global: [backstop]",
        "logging: {access: json, accessFile: access.log}",
        ""));
    SluiceServer server = SluiceServer.start(new ServeOptions(policy,
        new InetSocketAddress("127.0.0.1", 0), null, null, null, Duration.ofSeconds(1), 1),
        Map.of(), new Log(new PrintStream(new ByteArrayOutputStream(), true,
            StandardCharsets.UTF_8)));
    int sent = 0;
    List<Integer> statuses = new ArrayList<>();
    try {
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      Random random = new Random(23);
      String[] paths = {"/api/analysis/a", "/api/analysis/b", "/api/items/1", "/watched/x",
          "/login", "/static/app.js"};
      // The log stamps a request when its head arrives; the gateway decides a few microseconds
      // later once warm, but its very first decisions wait for classes to load and code to
      // compile (milliseconds; a bucket refilling every second can tell). A client of its own
      // takes that first pass over every route, far below its limits.
      for (int i = 0; i < 2 * paths.length; i++) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + server.port() + paths[i % paths.length])).timeout(Duration.ofSeconds(10))
            .header("X-Forwarded-For", "192.0.2.200");
        b.method(paths[i % paths.length].equals("/login") && i < paths.length ? "POST" : "GET",
            HttpRequest.BodyPublishers.noBody());
        client.send(b.build(), HttpResponse.BodyHandlers.discarding());
        sent++;
      }
      for (int i = 0; i < 400; i++) {
        String path = paths[random.nextInt(paths.length)];
        // Seven clients through the trusted proxy, one rotating its address, one direct.
        int who = random.nextInt(9);
        String xff = who < 7 ? "198.51.100." + (who + 1) : who == 7 ? "203.0.113." + i : null;
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + server.port() + path)).timeout(Duration.ofSeconds(10))
            .header("User-Agent", "agent-" + who);
        if (xff != null) {
          b.header("X-Forwarded-For", xff);
        }
        b.method(path.equals("/login") ? "POST" : "GET", HttpRequest.BodyPublishers.noBody());
        statuses.add(client.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode());
        sent++;
      }
    } finally {
      awaitLines(dir.resolve("access.log"), sent);
      server.close();
    }
    List<String> logged = Files.readAllLines(dir.resolve("access.log"));
    assertThat(logged).hasSize(sent);
    assertThat(statuses).contains(200, 429);

    List<String> replayed = new ArrayList<>();
    Replay.Result r = new Replay(new Replay.Options(PolicyLoader.load(policy, Map.of()).config()
        .policy(), null, List.of(dir.resolve("access.log").toString()), null, 1, 1_000_000,
        1_000_000, false), System.in, (rec, outcome, rule, route) -> replayed.add(
            outcome + " " + rule + " " + route)).run();
    assertThat(r.problems().count()).isZero();
    assertThat(r.inputs().get(0).format()).isEqualTo("json");

    List<String> expected = new ArrayList<>();
    for (String line : logged) {
      expected.add(field(line, "outcome") + " " + field(line, "rule") + " " + field(line, "route"));
    }
    for (int i = 0; i < sent; i++) {
      assertThat(replayed.get(i)).as("line " + (i + 1) + ": " + logged.get(i))
          .isEqualTo(expected.get(i));
    }
    // The traffic reached every kind of decision.
    assertThat(expected).anyMatch(e -> e.startsWith("refused analysis"))
        .anyMatch(e -> e.startsWith("refused login")).anyMatch(e -> e.startsWith("shadow-refused watch"))
        .anyMatch(e -> e.startsWith("refused read")).anyMatch(e -> e.startsWith("allowed"));
  }

  /** A JSON string field's value, or "null". */
  private static String field(String line, String name) {
    String key = "\"" + name + "\":";
    int i = line.indexOf(key);
    if (i < 0 || line.startsWith("null", i + key.length())) {
      return "null";
    }
    int s = i + key.length() + 1;
    return line.substring(s, line.indexOf('"', s));
  }

  private static void awaitLines(Path file, int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (Files.exists(file) && Files.readAllLines(file).size() >= n) {
        return;
      }
      LockSupport.parkNanos(2_000_000); // poll for the log writer, not a timed wait
    }
  }
}
