package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 7's start-up with a Redis store, against real redis-server processes: the gateway waits
 * for the store (and /readyz says why), a wrong password stops the start, and a store that does
 * not come within {@code startupWait} is started past, loudly.
 */
class StoreStartupIntegrationTests {

  @TempDir
  Path dir;

  final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  final Log log = new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8));
  SluiceServer server;
  Log previous;

  /**
   * The process's log is this test's, as in sluice serve: the Redis store's warnings about the
   * store these tests keep away land here, where a test can read them, not on the console.
   */
  @org.junit.jupiter.api.BeforeEach
  void captureProcessLog() {
    previous = Log.process();
    dev.sluice.server.log.Logging.setUp(log);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    dev.sluice.server.log.Logging.setUp(previous);
  }

  Path policy(String store) throws IOException {
    Path p = dir.resolve("policy.yaml");
    Files.writeString(p, String.join("\n",
        "rules:",
        "  api:",
        "    limits: [{type: fixed-window, limit: 3, window: 1m}]",
        "routes:",
        "  - {name: api, paths: [/api/**], rules: [api]}",
        "store:",
        store,
        ""));
    return p;
  }

  SluiceServer start(String... args) {
    try {
      return SluiceServer.start(Main.parseServe(List.of(args), Map.of()), Map.of(), log);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  HttpResponse<String> get(int port, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Polls (bounded) until the admin listener answers {@code path}. */
  HttpResponse<String> awaitAnswer(int port, String path) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return get(port, path);
      } catch (IOException e) {
        if (System.nanoTime() > until) {
          throw new AssertionError("admin listener did not answer in 30 s", e);
        }
        RedisProcess.pause(20);
      }
    }
  }

  static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Issue 7: /healthz said OK and the gateway took traffic before the store had connected, so
   * the first requests were decided degraded (unlimited on fail-open rules) on every start.
   */
  @Test
  void issue7_gatewayWaitsForTheStore_readyzIs503WithItsReason_untilReady() throws Exception {
    int redisPort = RedisProcess.freePort();
    int admin = RedisProcess.freePort();
    int gateway = RedisProcess.freePort();
    Path p = policy("  uri: redis://127.0.0.1:" + redisPort + "\n  startupWait: 2m");
    CompletableFuture<SluiceServer> starting = CompletableFuture.supplyAsync(() -> start(
        "--config", p.toString(), "--listen", "127.0.0.1:" + gateway, "--admin",
        "127.0.0.1:" + admin));
    HttpResponse<String> notReady = awaitAnswer(admin, "/readyz");
    assertThat(notReady.statusCode()).isEqualTo(503);
    assertThat(notReady.body()).startsWith("{\"status\":\"not ready\",\"store\":\"redis://127.0.0.1:"
        + redisPort + "\"");
    assertThat(get(admin, "/livez").statusCode()).isEqualTo(200);
    assertThat(accepts(gateway)).as("the gateway accepts connections before the store is ready")
        .isFalse();

    try (RedisProcess redis = RedisProcess.startOn(redisPort)) {
      server = starting.get(60, TimeUnit.SECONDS);
      assertThat(get(admin, "/readyz").statusCode()).isEqualTo(200);
      List<Integer> codes = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        codes.add(get(gateway, "/api/x").statusCode());
      }
      assertThat(codes).containsExactly(200, 200, 200, 429, 429);
      assertThat(dev.sluice.server.Prom.canon(server.metrics().render())).contains("sluice_store_ready 1\n")
          .contains("sluice_decisions_total{rule=\"api\",outcome=\"degraded\"} 0\n");
      assertThat(logBytes.toString(StandardCharsets.UTF_8)).contains("INFO  store ready");
      server.close();
      server = null;
    }
  }

  /** Issue 7: a wrong password read "cannot reach ... yet (Unable to connect ...)", forever. */
  @Test
  void issue7_wrongPassword_stopsTheStart_exit1_sayingAuthenticationFailed() throws Exception {
    try (RedisProcess redis = RedisProcess.start("--requirepass", "s3cret")) {
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      long start = System.nanoTime();
      int code = new Main(new PrintStream(new ByteArrayOutputStream()),
          new PrintStream(err, true, StandardCharsets.UTF_8), Map.of()).run(new String[] {
              "serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
              "--store", "redis://:not-the-password@127.0.0.1:" + redis.port});
      String text = err.toString(StandardCharsets.UTF_8);
      assertThat(code).as(text).isEqualTo(Main.FAILED);
      assertThat(text).contains("ERROR cannot start: store redis://:***@127.0.0.1:" + redis.port
          + ": authentication failed: WRONGPASS").doesNotContain("not-the-password")
          .doesNotContain("gateway listening");
      // A first attempt can fail before Redis answered AUTH ("Connection closed prematurely",
      // as in sluice-redis's StartupIntegrationTests): a "cannot reach" line, never the password.
      assertThat(text.lines().filter(l -> l.contains("cannot reach")))
          .allMatch(l -> !l.contains("WRONGPASS") && !l.contains("authentication"));
      assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start))
          .as("seconds: not the 10 s start-up wait").isLessThan(8);
    }
  }

  @Test
  void storeNotReadyWithinStartupWait_startsAnyway_warnsLoudly_degraded() throws Exception {
    int dead = RedisProcess.freePort();
    Path p = policy("  uri: redis://127.0.0.1:" + dead + "\n  startupWait: 1s");
    server = start("--config", p.toString(), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0");
    String log = logBytes.toString(StandardCharsets.UTF_8);
    assertThat(log).contains("WARN  STORE NOT READY after 1s; the gateway starts anyway and "
        + "decisions are DEGRADED (each rule's onStoreError) until the store answers store="
        + "redis://127.0.0.1:" + dead);
    assertThat(log.indexOf("STORE NOT READY")).isLessThan(log.indexOf("gateway listening"));
    HttpResponse<String> ready = get(server.adminPort(), "/readyz");
    assertThat(ready.statusCode()).isEqualTo(503);
    assertThat(ready.body()).contains("\"reason\":\"cannot reach it: Connection refused");
    assertThat(get(server.port(), "/api/x").statusCode()).as("fail-open rule").isEqualTo(200);
    assertThat(dev.sluice.server.Prom.canon(server.metrics().render())).contains("sluice_store_ready 0\n")
        .contains("sluice_decisions_total{rule=\"api\",outcome=\"degraded\"} 1\n")
        .doesNotContain("sluice_store_connect_failures_total 0\n");
  }
}
