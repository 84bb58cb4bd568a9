package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.RateLimiter;
import dev.sluice.gateway.GatewayEvents;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.PolicyConfig;
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
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The serve wiring (policy, store, admin, reload) with a stand-in gateway that records what it
 * was given; the real gateway is driven end to end in {@code SluiceServerIntegrationTests}.
 */
class SluiceServerTest {

  @TempDir
  Path dir;

  final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  final Log log = new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8));
  final HttpClient client = HttpClient.newHttpClient();
  Supplier<PolicyConfig> config;
  RateLimiter limiter;
  GatewayEvents events;
  boolean gatewayClosed;
  SluiceServer server;

  final GatewayStarter fake = (listen, upstream, cfg, lim, ev, threads, api, tls, mods) -> {
    config = cfg;
    limiter = lim;
    events = ev;
    return new GatewayStarter.Running() {
      @Override
      public int port() {
        return 18080;
      }

      @Override
      public void close() {
        gatewayClosed = true;
      }
    };
  };

  static final String POLICY = String.join("\n",
      "rules:",
      "  api:",
      "    limits:",
      "      - type: fixed-window",
      "        limit: 10",
      "        window: 1m",
      "routes:",
      "  - name: api",
      "    paths: [/api/**]",
      "    rules: [api]",
      "");

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  String log() {
    return logBytes.toString(StandardCharsets.UTF_8);
  }

  SluiceServer start(Path config, String store, Map<String, String> env) throws Exception {
    return start(config, store, env, Duration.ofMillis(20));
  }

  SluiceServer start(Path config, String store, Map<String, String> env, Duration watch)
      throws Exception {
    ServeOptions o = new ServeOptions(config, new InetSocketAddress("127.0.0.1", 0), null,
        new InetSocketAddress("127.0.0.1", 0), store, watch, 0);
    server = SluiceServer.start(o, env, log, fake);
    return server;
  }

  /**
   * Issue 20, item 9: /readyz answered 200 before the gateway's listener accepted connections, so
   * a load balancer sent its first requests into refused connections. It is 503 until every
   * listener is bound, then 200, and one line names every listener.
   */
  @Test
  void issue20_readyz_is503_untilEveryListenerIsBound() throws Exception {
    int adminPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      adminPort = s.getLocalPort();
    }
    URI readyz = URI.create("http://127.0.0.1:" + adminPort + "/readyz");
    HttpResponse<?>[] whileStarting = new HttpResponse<?>[1];
    GatewayStarter slow = (listen, upstream, cfg, lim, ev, loops, api, tls, mods) -> {
      whileStarting[0] = client.send(HttpRequest.newBuilder(readyz).build(),
          HttpResponse.BodyHandlers.ofString());
      return fake.start(listen, upstream, cfg, lim, ev, loops, api, tls, mods);
    };
    ServeOptions o = new ServeOptions(null, new InetSocketAddress("127.0.0.1", 0), null,
        new InetSocketAddress("127.0.0.1", adminPort), null, Duration.ofMillis(20), 0);
    server = SluiceServer.start(o, Map.of(), log, slow);
    assertThat(whileStarting[0].statusCode()).as("the gateway not yet bound").isEqualTo(503);
    assertThat(whileStarting[0].body().toString()).contains("\"listeners\":\"starting\"");
    HttpResponse<String> ready = client.send(HttpRequest.newBuilder(readyz).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(ready.statusCode()).isEqualTo(200);
    assertThat(ready.body()).contains("\"status\":\"ready\"").doesNotContain("listeners");
    assertThat(log()).contains("INFO  ready gateway=http://127.0.0.1:18080 admin=http://127.0.0.1:"
        + adminPort + " rls=off checkApi=off store=ready");
  }

  long limitOf(String rule) {
    return config.get().policy().rules().get(rule).limits().get(0).capacity();
  }

  static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(10);
    }
  }

  @Test
  void defaultPolicy_startupLogSaysWhereAndWhat() throws Exception {
    start(null, null, Map.of());
    assertThat(config.get().source()).isNull();
    assertThat(config.get().policy().rules()).containsKey("analysis");
    assertThat(log())
        .contains("INFO  policy loaded source=\"<embedded default>\" summary=\"5 rules, 6 routes, "
            + "global [backstop]\"")
        .contains("INFO  store store=\"memory (max 1000000 keys, per process)\"")
        .contains("INFO  gateway listening address=http://127.0.0.1:18080 upstream=\"built-in demo")
        .contains("INFO  admin listening address=http://127.0.0.1:" + server.adminPort())
        .contains("client_address=\"TCP peer (no proxy trusted; forwarding headers ignored)\"");
  }

  @Test
  void storeFlag_winsOverEnv_andFile() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, POLICY + "store:\n  uri: memory\n  maxKeys: 5000\n");
    start(p, "memory", Map.of("SLUICE_STORE", "redis://ignored:6379"));
    assertThat(config.get().store().uri()).isEqualTo("memory");
    assertThat(config.get().store().maxKeys()).isEqualTo(5000);
  }

  @Test
  void redisStore_fromEnv_isUsed_andPasswordsAreRedacted() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, POLICY + "store:\n  startupWait: 0s\n");
    // The process's log too, as in sluice serve: the Redis store's own lines (System.Logger, so
    // java.util.logging) come through the same Log, and the same mask.
    Log previous = Log.process();
    dev.sluice.server.log.Logging.setUp(log);
    try {
      start(p, null, Map.of("SLUICE_STORE", "redis://:secret@127.0.0.1:1"));
      assertThat(config.get().store().uri()).isEqualTo("redis://:secret@127.0.0.1:1");
      assertThat(server.policy().effective().get("store").toString())
          .contains("uri=redis://:***@127.0.0.1:1");
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
      while (!log().contains("sluice-redis: cannot reach") && System.nanoTime() < deadline) {
        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll, not a timed wait
      }
      assertThat(log()).contains("WARN  sluice-redis: cannot reach redis://:***@127.0.0.1:1 yet")
          .contains("redis://:***@127.0.0.1:1").doesNotContain("secret");
    } finally {
      dev.sluice.server.log.Logging.setUp(previous);
    }
  }

  @Test
  void invalidPolicy_doesNotStartTheGateway() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, "rules: 5\n");
    assertThatThrownBy(() -> start(p, null, Map.of())).isInstanceOf(ConfigException.class);
    assertThat(config).isNull();
  }

  @Test
  void reload_valid_swapsAtomically_invalid_keepsTheOldPolicy() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, POLICY);
    // Reloads here are direct calls; a fast file watch would race them and count twice.
    start(p, null, Map.of(), Duration.ofHours(1));
    Supplier<PolicyConfig> seen = config;
    assertThat(limitOf("api")).isEqualTo(10);

    write(p, POLICY.replace("limit: 10", "limit: 20"));
    assertThat(server.reload()).isTrue();
    assertThat(limitOf("api")).isEqualTo(20);
    assertThat(seen.get().policy().rules().get("api").limits().get(0).capacity()).isEqualTo(20);

    write(p, POLICY.replace("limit: 10", "limit: -1"));
    assertThat(server.reload()).isFalse();
    assertThat(limitOf("api")).isEqualTo(20);
    assertThat(log()).contains("ERROR policy rejected; the previous policy keeps serving")
        .contains(p + ":5: rules.api.limits[0].limit : -1 (expected: a whole number > 0)");
    assertThat(server.metrics().reloads(true)).isEqualTo(1);
    assertThat(server.metrics().reloads(false)).isEqualTo(1);

    HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + server.adminPort() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(dev.sluice.server.Prom.canon(metrics.body())).contains("sluice_reloads_total{result=\"ok\"} 1\n")
        .contains("sluice_reloads_total{result=\"failed\"} 1\n");
  }

  /**
   * The moderation lists are read when the server builds its Moderator, not by the policy module:
   * a bad list file still stops a start and fails a reload at its own file and line, and the
   * previous policy keeps serving.
   */
  @Test
  void badModerationList_stopsTheStart_andFailsTheReload_keepingTheOldPolicy() throws Exception {
    Path p = dir.resolve("p.yaml");
    Path blocked = dir.resolve("blocked.txt");
    String moderated = POLICY + String.join("\n", "moderation:", "  lists: .", "  http:",
        "    - paths: [/api/**]", "      fields: {name: username}", "");
    write(p, moderated);
    write(blocked, "frack\n***\n");
    assertThatThrownBy(() -> start(p, null, Map.of())).isInstanceOf(ConfigException.class)
        .hasMessageContaining(blocked + ":2: moderation.lists : \"***\"");
    assertThat(config).isNull();

    write(blocked, "frack\n");
    start(p, null, Map.of(), Duration.ofHours(1));
    write(p, moderated.replace("limit: 10", "limit: 20"));
    write(blocked, "frack\n***\n");
    assertThat(server.reload()).isFalse();
    assertThat(limitOf("api")).isEqualTo(10);
    assertThat(log()).contains("ERROR policy rejected; the previous policy keeps serving")
        .contains(blocked + ":2: moderation.lists : \"***\" (expected: a term, or *term* to "
            + "match inside words too)");
    assertThat(server.metrics().reloads(false)).isEqualTo(1);
  }

  @Test
  void reload_onFileChange() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, POLICY);
    start(p, null, Map.of());
    write(p, POLICY.replace("limit: 10", "limit: 30"));
    await(() -> limitOf("api") == 30);
    write(p, POLICY.replace("limit: 10", "limit: nope"));
    await(() -> server.metrics().reloads(false) == 1);
    assertThat(limitOf("api")).isEqualTo(30);
    write(p, POLICY.replace("limit: 10", "limit: 40"));
    await(() -> limitOf("api") == 40);
    assertThat(server.metrics().reloads(true)).isEqualTo(2);

    HttpResponse<String> policy = client.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + server.adminPort() + "/v1/policy")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(policy.body()).contains("\"limit\":40");
  }

  @Test
  void reload_onSighup() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, POLICY);
    ServeOptions o = new ServeOptions(p, new InetSocketAddress("127.0.0.1", 0), null, null, null,
        Duration.ofHours(1), 0);
    server = SluiceServer.start(o, Map.of(), log, fake);
    org.junit.jupiter.api.Assumptions.assumeTrue(log().contains("and on SIGHUP"),
        "this JVM cannot deliver SIGHUP");
    write(p, POLICY.replace("limit: 10", "limit: 50"));
    Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(ProcessHandle.current().pid()))
        .start();
    assertThat(kill.waitFor()).isZero();
    // The log line follows the swap, so wait for the line, then check the swap it reports.
    await(() -> log().contains("policy reloaded policy=" + p + " cause=SIGHUP"));
    assertThat(limitOf("api")).isEqualTo(50);
  }

  @Test
  void reload_keepsTheRunningStore() throws Exception {
    Path p = dir.resolve("p.yaml");
    write(p, POLICY);
    start(p, null, Map.of());
    write(p, POLICY + "store:\n  uri: redis://127.0.0.1:6379\n");
    assertThat(server.reload()).isTrue();
    assertThat(config.get().store().uri()).isEqualTo("memory");
    assertThat(log()).contains("store settings changed in the policy file; they apply after a "
        + "restart");
  }

  @Test
  void close_stopsTheGateway() throws Exception {
    start(null, null, Map.of());
    server.close();
    server = null;
    assertThat(gatewayClosed).isTrue();
  }

  @Test
  void events_feedTheMetrics() throws Exception {
    start(null, null, Map.of());
    events.webSocketOpened();
    events.generated(413);
    assertThat(dev.sluice.server.Prom.canon(server.metrics().render())).contains("sluice_websocket_connections 1\n")
        .contains("sluice_generated_responses_total{status=\"413\"} 1\n");
    assertThat(limiter).isNotNull();
  }

  /** Replaces the file at once, as an operator's editor or deploy tool does: the file watch
   * never reads half a file. */
  static void write(java.nio.file.Path p, String content) throws java.io.IOException {
    java.nio.file.Path tmp = p.resolveSibling(p.getFileName() + ".tmp");
    Files.writeString(tmp, content);
    Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }
}
