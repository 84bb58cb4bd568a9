package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.CurlClient;
import dev.sluice.gateway.Fixtures;
import dev.sluice.gateway.ScriptedApp;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.redis.RedisProcess;
import dev.sluice.server.Closer;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Limits driven by the upstream's answer (issue 22), end to end on seed 003's invites: the
 * example policy as shipped, a real app answering 404 for a wrong code, and the gateway counting
 * those answers into escalating cooldowns: on the byte relay and on HTTP/2, with the in-memory
 * store on the test's clock, and shared by two gateways on one Redis.
 */
class ResponseCountingIntegrationTests {

  private static final Path EXAMPLE = Path.of("..", "examples", "seed-003-chat.yaml");

  @TempDir
  Path dir;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private final Closer open = new Closer();
  private ScriptedApp app;

  @BeforeEach
  void start() throws Exception {
    app = open.add(new ScriptedApp());
  }

  @AfterEach
  void stop() throws Exception {
    open.close();
  }


  private HttpResponse<String> send(int port, String method, String path, String user)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody());
    if (user != null) {
      b.header("Cookie", "user_id=" + user);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Sends until the answer is a 429 (an eventual effect, 10 s at most), and returns it. */
  private HttpResponse<String> eventually429(int port, String method, String path, String user)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (true) {
      HttpResponse<String> r = send(port, method, path, user);
      if (r.statusCode() == 429 || System.nanoTime() > deadline) {
        assertThat(r.statusCode()).as(method + " " + path).isEqualTo(429);
        return r;
      }
      Thread.sleep(5);
    }
  }

  private static long retryAfter(HttpResponse<?> r) {
    return Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
  }

  @Test
  void wrongCodes_escalateTwicePerLock_toTheMaximum_andARightCodeResets() throws Exception {
    PolicyConfig c = PolicyLoader.load(EXAMPLE, Map.of("SERVER_INVITE_MAX_RETRIES", "3",
        "SERVER_INVITE_MAX_COOLDOWN_MS", "480000")).config();
    try (Fixtures.Harness h = new Fixtures.Harness(c, app.uri())) {
      int port = h.gateway.port();
      long[] locks = {60, 120, 240, 480, 480};
      for (long lock : locks) {
        for (int i = 0; i < 3; i++) {
          assertThat(send(port, "GET", "/api/invites/wrong-" + i, "alice").statusCode())
              .isEqualTo(404);
        }
        HttpResponse<String> locked = send(port, "GET", "/api/invites/" + ScriptedApp.RIGHT,
            "alice");
        assertThat(locked.statusCode()).isEqualTo(429);
        assertThat(retryAfter(locked)).isEqualTo(lock);
        assertThat(locked.body()).contains("\"rule\":\"invite:codes\"");
        h.ticker.advance(Duration.ofSeconds(lock / 2));
        // Hammering while locked is refused and does not extend the lock.
        assertThat(retryAfter(send(port, "GET", "/api/invites/wrong-x", "alice")))
            .isEqualTo(lock - lock / 2);
        // Another member behind the same address is not locked out.
        assertThat(send(port, "GET", "/api/invites/wrong-y", "bob").statusCode())
            .isEqualTo(404);
        h.ticker.advance(Duration.ofSeconds(lock - lock / 2));
      }
      assertThat(send(port, "GET", "/api/invites/" + ScriptedApp.RIGHT, "alice").statusCode())
          .isEqualTo(200);
      for (int i = 0; i < 3; i++) {
        send(port, "GET", "/api/invites/again-" + i, "alice");
      }
      assertThat(retryAfter(send(port, "GET", "/api/invites/x", "alice"))).isEqualTo(60);
      // What reached the app: the counted tries and bob's, never a refused one.
      assertThat(app.count("GET /api/invites/wrong-x")).isZero();
      assertThat(app.count("GET /api/invites/")).isEqualTo(5 * 3 + 5 + 1 + 3);
    }
  }

  @Test
  void onlySuccessfulJoinsCount_andHttp2StreamsAreCountedToo() throws Exception {
    PolicyConfig c = PolicyLoader.load(EXAMPLE, Map.of("GRYT_INVITE_MAX_JOINS_PER_HOUR", "2",
        "SERVER_INVITE_MAX_RETRIES", "3")).config();
    try (Fixtures.Harness h = new Fixtures.Harness(c, app.uri())) {
      int port = h.gateway.port();
      String join = "/api/invites/" + ScriptedApp.RIGHT + "/join";
      assertThat(send(port, "POST", join, "carol").statusCode()).isEqualTo(200);
      assertThat(send(port, "POST", "/api/invites/nope/join", "carol").statusCode())
          .isEqualTo(404);                                 // a failed join: not a join
      assertThat(send(port, "POST", join, "carol").statusCode()).isEqualTo(200);
      HttpResponse<String> third = send(port, "POST", join, "carol");
      assertThat(third.statusCode()).isEqualTo(429);
      assertThat(third.body()).contains("\"rule\":\"invite:joins\"");
      // HTTP/2: two wrong codes as streams, one over HTTP/1.1: the member is locked either way.
      String url = "http://127.0.0.1:" + port + "/api/invites/h2-wrong";
      for (int i = 0; i < 2; i++) {
        assertThat(CurlClient.run("--http2-prior-knowledge", "-o", "/dev/null",
            "-w", "%{http_code} %{http_version}", "-H", "Cookie: user_id=dave", url))
            .isEqualTo("404 2");
      }
      assertThat(send(port, "GET", "/api/invites/wrong", "dave").statusCode()).isEqualTo(404);
      assertThat(CurlClient.run("--http2-prior-knowledge", "-o", "/dev/null",
          "-w", "%{http_code}", "-H", "Cookie: user_id=dave", url)).isEqualTo("429");
      assertThat(app.count("GET /api/invites/h2-wrong")).isEqualTo(2);
    }
  }

  @Test
  void twoGatewaysOnOneRedis_shareTheCount() throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    Path file = dir.resolve("invites.yaml");
    Files.writeString(file, Files.readString(EXAMPLE) + "\nstore: {uri: '" + redis.uri()
        + "', deadline: 2s, startupWait: 30s}\n");
    Map<String, String> env = Map.of("SERVER_INVITE_MAX_RETRIES", "3",
        "GRYT_INVITE_MAX_JOINS_PER_HOUR", "1");
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    List<SluiceServer> fleet = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      fleet.add(open.add(SluiceServer.start(new ServeOptions(file, new InetSocketAddress(
          "127.0.0.1", 0), app.uri(), null, null, Duration.ofHours(1), 1), env,
          new Log(new PrintStream(log, true, StandardCharsets.UTF_8)))));
    }
    int a = fleet.get(0).port();
    int b = fleet.get(1).port();
    assertThat(send(a, "GET", "/api/invites/w1", "erin").statusCode()).isEqualTo(404);
    assertThat(send(b, "GET", "/api/invites/w2", "erin").statusCode()).isEqualTo(404);
    assertThat(send(a, "GET", "/api/invites/w3", "erin").statusCode()).isEqualTo(404);
    // A response's count reaches Redis a round trip after the response: the next request, on
    // either gateway, is refused once it has (polled; a wrong code, which counts anyway).
    for (int port : new int[] {b, a}) {
      HttpResponse<String> locked = eventually429(port, "GET", "/api/invites/w4", "erin");
      assertThat(retryAfter(locked)).isBetween(58L, 60L);
    }
    assertThat(send(b, "GET", "/api/invites/" + ScriptedApp.RIGHT, "erin").statusCode())
        .isEqualTo(429);
    assertThat(app.count("GET /api/invites/" + ScriptedApp.RIGHT)).isZero();
    // A limit counted on successes (invite:joins, a sliding log read with a peek): one join an
    // hour, whichever gateway it went through.
    String join = "/api/invites/" + ScriptedApp.RIGHT + "/join";
    assertThat(send(a, "POST", join, "fay").statusCode()).isEqualTo(200);
    HttpResponse<String> second = eventually429(b, "POST", join, "fay");
    assertThat(second.body()).contains("\"rule\":\"invite:joins\"");
    assertThat(retryAfter(second)).isBetween(3599L, 3600L);
    assertThat(fleet.get(0).metrics().countedResponses("invite:codes", "counted")
        + fleet.get(1).metrics().countedResponses("invite:codes", "counted"))
        .isEqualTo(app.count("GET /api/invites/w"));
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("ban applied")
        .contains("rule=invite:codes").contains("key=erin:127.0.0.1");
  }

  /**
   * Issue 30's attack on a fleet: 30 wrong codes at once, split over two gateways on one Redis,
   * against an app that takes 300 ms per guess. The reservations are Redis's, so the two
   * gateways together let 3 through; then 10 guesses whose clients hang up, alternating
   * gateways, get nothing more through.
   */
  @Test
  void twoGatewaysOnOneRedis_thirtyGuessesAtOnce_threeReachTheApp() throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    dev.sluice.gateway.GuessingApp slow = open.add(new dev.sluice.gateway.GuessingApp(300));
    Path file = dir.resolve("invites.yaml");
    Files.writeString(file, """
        version: 1
        rules:
          invite:codes:ip:
            countStatus: [404]
            limits: [{type: cooldown, maxRetries: 3, retryWindow: 5m, cooldown: 1m}]
        routes:
          - {name: invites, paths: [/api/invites/**], rules: [invite:codes:ip]}
        store: {uri: '%s', deadline: 2s, startupWait: 30s}
        """.formatted(redis.uri()));
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    List<SluiceServer> fleet = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      fleet.add(open.add(SluiceServer.start(new ServeOptions(file, new InetSocketAddress(
          "127.0.0.1", 0), slow.uri(), null, null, Duration.ofHours(1), 1), Map.of(),
          new Log(new PrintStream(log, true, StandardCharsets.UTF_8)))));
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors
        .newFixedThreadPool(30);
    try {
      java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
      List<java.util.concurrent.Future<Integer>> sent = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        int port = fleet.get(i % 2).port();
        int n = i;
        sent.add(pool.submit(() -> {
          go.await();
          return send(port, "GET", "/api/invites/wrong-" + n, null).statusCode();
        }));
      }
      go.countDown();
      int forwarded = 0;
      for (java.util.concurrent.Future<Integer> f : sent) {
        forwarded += f.get(30, java.util.concurrent.TimeUnit.SECONDS) == 404 ? 1 : 0;
      }
      assertThat(slow.count("/api/invites/wrong")).isEqualTo(3);
      assertThat(forwarded).isEqualTo(3);
    } finally {
      pool.shutdownNow();
    }
    for (int i = 0; i < 10; i++) {
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", fleet.get(i % 2).port())) {
        s.getOutputStream().write(("GET /api/invites/wrong-abort-" + i
            + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        Thread.sleep(100);
        s.setSoLinger(true, 0);
      }
    }
    assertThat(slow.count("/api/invites/wrong-abort")).isZero();
    assertThat(send(fleet.get(1).port(), "GET", "/api/invites/right", null).statusCode())
        .isEqualTo(429);
  }
}
