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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice serve} end to end: the command line parsed as {@code Main} does, the real Netty
 * gateway with its demo upstream and the admin listener on ephemeral loopback ports, driven by
 * the JDK's HTTP client.
 */
class SluiceServerIntegrationTests {

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

  SluiceServer serve(Map<String, String> env, String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("--listen", "127.0.0.1:0", "--admin",
        "127.0.0.1:0"));
    args.addAll(List.of(extra));
    server = SluiceServer.start(Main.parseServe(args, env), env,
        new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8)));
    return server;
  }

  HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  String admin(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort()
        + path)).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  /** Seed 000's check: {@code for i in $(seq 20); do curl ... /api/analysis/x; done}. */
  @Test
  void seed000Loop_fifteenThen429() throws Exception {
    serve(Map.of());
    List<Integer> codes = new ArrayList<>();
    HttpResponse<String> last = null;
    for (int i = 0; i < 20; i++) {
      last = get("/api/analysis/x");
      codes.add(last.statusCode());
    }
    assertThat(codes.subList(0, 15)).doesNotContain(429);
    assertThat(codes.subList(15, 20)).containsOnly(429);
    assertThat(last.headers().firstValue("retry-after")).isPresent();
    assertThat(last.body()).contains("\"error\":\"too many requests\"");
    assertThat(dev.sluice.server.Prom.canon(admin("/metrics")))
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"refused\"} 5\n")
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"allowed\"} 15\n");
  }

  @Test
  void healthz_isNeverLimited() throws Exception {
    serve(Map.of("RATE_LIMIT_MAX", "5"));
    for (int i = 0; i < 50; i++) {
      assertThat(get("/healthz").statusCode()).isEqualTo(200);
    }
    assertThat(admin("/healthz")).contains("ok");
  }

  @Test
  void envOverrides_reachTheGateway_trustProxyReadsFromTheRight() throws Exception {
    serve(Map.of("LIMIT_ANALYSIS_BURST", "2", "TRUST_PROXY", "1"));
    assertThat(get("/api/analysis/x", "X-Forwarded-For", "1.1.1.1, 7.7.7.7").statusCode())
        .isEqualTo(200);
    assertThat(get("/api/analysis/x", "X-Forwarded-For", "2.2.2.2, 7.7.7.7").statusCode())
        .isEqualTo(200);
    // a new left-most entry does not buy a new bucket: the key is the proxy-appended 7.7.7.7
    assertThat(get("/api/analysis/x", "X-Forwarded-For", "3.3.3.3, 7.7.7.7").statusCode())
        .isEqualTo(429);
    assertThat(get("/api/analysis/x", "X-Forwarded-For", "8.8.8.8").statusCode())
        .isEqualTo(200);
  }

  @Test
  void policyFile_hotReload_validThenInvalid() throws Exception {
    String base = String.join("\n",
        "rules:",
        "  api:",
        "    limits: [{type: fixed-window, limit: 100, window: 1m}]",
        "routes:",
        "  - {name: healthz, paths: [/healthz], exempt: true}",
        "  - {name: api, paths: [/api/**], rules: [api]}",
        "");
    Path p = dir.resolve("policy.yaml");
    write(p, base);
    serve(Map.of(), "--config", p.toString());
    for (int i = 0; i < 3; i++) {
      assertThat(get("/orders/1").statusCode()).isEqualTo(200);
    }

    String withOrders = base.replace("routes:", "  orders:\n"
        + "    limits: [{type: fixed-window, limit: 1, window: 1m}]\nroutes:")
        + "  - {name: orders, paths: [/orders/**], rules: [orders]}\n";
    write(p, withOrders);
    assertThat(server.reload()).isTrue();
    assertThat(get("/orders/1").statusCode()).isEqualTo(200);
    assertThat(get("/orders/1").statusCode()).isEqualTo(429);

    write(p, withOrders.replace("limit: 1,", "limit: zero,"));
    assertThat(server.reload()).isFalse();
    assertThat(get("/orders/1").statusCode()).isEqualTo(429);
    assertThat(dev.sluice.server.Prom.canon(admin("/metrics"))).contains("sluice_reloads_total{result=\"ok\"} 1\n")
        .contains("sluice_reloads_total{result=\"failed\"} 1\n");
    assertThat(admin("/v1/policy")).contains("\"source\":\"" + p + "\"")
        .contains("\"orders\":{\"key\":\"ip\"");
  }

  @Test
  void everyExample_runsOnTheRealGateway() throws Exception {
    Path examples = Path.of("").toAbsolutePath();
    while (!Files.isDirectory(examples.resolve("examples"))) {
      examples = examples.getParent();
    }
    List<Path> files;
    try (var s = Files.list(examples.resolve("examples"))) {
      files = s.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    }
    for (Path file : files) {
      serve(Map.of(), "--config", file.toString());
      HttpResponse<String> r = get("/healthz");
      assertThat(r.statusCode()).as(file.toString()).isEqualTo(200);
      server.close();
      server = null;
    }
  }

  @Test
  void startupLog_namesAddressesPolicyAndStore() throws Exception {
    serve(Map.of());
    String log = logBytes.toString(StandardCharsets.UTF_8);
    assertThat(log).contains("gateway listening address=http://127.0.0.1:" + server.port())
        .contains("admin listening address=http://127.0.0.1:" + server.adminPort())
        .contains("policy loaded source=\"<embedded default>\"")
        .contains("store store=\"memory");
  }

  /**
   * Issue 7, seed 004 with {@code RATE_LIMIT_MAX=2}: preflights were counted and refused, which
   * browsers report as a CORS failure. They pass unchecked; the real requests spend the quota,
   * and the 429 carries the CORS headers with {@code Vary: Origin}.
   */
  @Test
  void seed004_corsPreflights_areNotLimited_andThe429CarriesCors() throws Exception {
    serve(Map.of("RATE_LIMIT_MAX", "2"), "--config", example("seed-004-graphql.yaml").toString());
    String origin = "https://explorer.example.com";
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> preflight = client.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + server.port() + "/graphql"))
          .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
          .header("Origin", origin).header("Access-Control-Request-Method", "POST")
          .header("Access-Control-Request-Headers", "content-type").build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(preflight.statusCode()).as("preflight " + i).isEqualTo(200);
    }
    assertThat(get("/graphql", "Origin", origin).statusCode()).isEqualTo(200);
    assertThat(get("/graphql", "Origin", origin).statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("/graphql", "Origin", origin);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Access-Control-Allow-Origin")).hasValue(origin);
    assertThat(refused.headers().allValues("Vary")).contains("origin");
    assertThat(dev.sluice.server.Prom.canon(admin("/metrics")))
        .contains("sluice_decisions_total{rule=\"global\",outcome=\"allowed\"} 2\n");
  }

  /** Issue 7: the global backstop showed 0 while every limited request spent its quota. */
  @Test
  void metrics_countTheGlobalBackstop_forRequestsAnotherRuleDecides() throws Exception {
    serve(Map.of());
    for (int i = 0; i < 16; i++) {
      get("/api/analysis/x");
    }
    assertThat(dev.sluice.server.Prom.canon(admin("/metrics")))
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"allowed\"} 15\n")
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"refused\"} 1\n")
        .contains("sluice_decisions_total{rule=\"backstop\",outcome=\"allowed\"} 16\n");
  }

  static Path example(String name) {
    Path dir = Path.of("").toAbsolutePath();
    while (!Files.isDirectory(dir.resolve("examples"))) {
      dir = dir.getParent();
    }
    return dir.resolve("examples").resolve(name);
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
