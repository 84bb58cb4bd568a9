package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.redis.RedisProcess;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rest of the operator's list (issue 22): a top-level {@code deny:} list (403, never
 * forwarded, counted), refusal statuses per rule and globally, and banning a key by hand through
 * {@code POST /v1/bans/{rule}/{key}} and {@code sluice admin ban}, on the memory store and on a
 * real Redis shared by two gateways.
 */
class DenyStatusBanIntegrationTests {

  private static final String POLICY = String.join("\n",
      "trust: {hops: 1}",
      "deny: [203.0.113.0/24]",
      "response: {status: 503}",
      "rules:",
      "  login:",
      "    limits: [{type: token-bucket, burst: 2, refill: 1, period: 1h}]",
      "    ban: 1h",
      "  api:",
      "    status: 403",
      "    limits: [{type: fixed-window, limit: 1, window: 1h}]",
      "routes:",
      "  - {name: login, paths: [/login], rules: [login]}",
      "  - {name: api, paths: [/api/**], rules: [api]}",
      "");

  @TempDir
  Path dir;

  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final Closer open = new Closer();
  private final AtomicInteger upstreamHits = new AtomicInteger();
  private HttpServer app;

  @BeforeEach
  void upstream() throws Exception {
    app = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    app.createContext("/", x -> {
      upstreamHits.incrementAndGet();
      x.getRequestBody().readAllBytes();
      x.sendResponseHeaders(200, 2);
      try (OutputStream out = x.getResponseBody()) {
        out.write("ok".getBytes(StandardCharsets.UTF_8));
      }
    });
    app.start();
  }

  @AfterEach
  void stop() throws Exception {
    open.close();
    app.stop(0);
  }

  private SluiceServer serve(String extra) throws Exception {
    Path p = dir.resolve("policy-" + open.size() + ".yaml");
    Files.writeString(p, POLICY + extra);
    SluiceServer s = SluiceServer.start(Main.parseServe(List.of("--listen", "127.0.0.1:0",
        "--admin", "127.0.0.1:0", "--config", p.toString(), "--upstream",
        "http://127.0.0.1:" + app.getAddress().getPort()), Map.of()), Map.of(),
        new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8)));
    open.add(s);
    return s;
  }

  private HttpResponse<String> get(SluiceServer s, String path, String client)
      throws Exception {
    return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port()
        + path)).header("X-Forwarded-For", client).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private record Run(int code, String out, String err) {}

  private static boolean sleep10() throws InterruptedException {
    Thread.sleep(10);
    return true;
  }

  private Run sluice(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of("USER", "ops")).run(args);
    return new Run(code, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  /** One raw request: the response's status line and head, read to the end of the head. */
  private static String raw(int port, String request, boolean halfClose) throws Exception {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      if (halfClose) {
        s.shutdownOutput();
      }
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  @Test
  void denyList_is403_neverForwarded_counted_onHttpAndWebSocketUpgrades() throws Exception {
    SluiceServer s = serve("");
    HttpResponse<String> denied = get(s, "/login", "203.0.113.9");
    assertThat(denied.statusCode()).isEqualTo(403);
    assertThat(denied.body()).isEqualTo("{\"error\":\"forbidden\",\"reason\":\"deny list\"}");
    assertThat(denied.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(get(s, "/login", "198.51.100.1").statusCode()).isEqualTo(200);
    String upgrade = raw(s.port(), "GET /chat HTTP/1.1\r\nHost: app\r\nUpgrade: websocket\r\n"
        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        + "Sec-WebSocket-Version: 13\r\nX-Forwarded-For: 203.0.113.77\r\n\r\n", false);
    assertThat(upgrade).startsWith("HTTP/1.1 403 ").contains("deny list");
    // A client that half-closes after its request still reads its 403.
    String half = raw(s.port(), "POST /api/x HTTP/1.1\r\nHost: app\r\nContent-Length: 5\r\n"
        + "X-Forwarded-For: 203.0.113.5\r\n\r\nhello", true);
    assertThat(half).startsWith("HTTP/1.1 403 ").endsWith("\"reason\":\"deny list\"}");
    assertThat(upstreamHits.get()).isEqualTo(1);
    assertThat(s.metrics().deniedCount("http")).isEqualTo(2);
    assertThat(s.metrics().deniedCount("ws-connect")).isEqualTo(1);
    assertThat(s.metrics().render()).contains("sluice_denied_total{kind=\"http\"} 2.0");
  }

  @Test
  void aDeniedClientThatDoesNotRead_getsEveryAnswer_inOrder_whenItReadsAtLast() throws Exception {
    SluiceServer s = serve("");
    int n = 400;
    try (Socket c = new Socket()) {
      c.connect(new InetSocketAddress("127.0.0.1", s.port()), 5000);
      c.setSoTimeout(10_000);
      StringBuilder all = new StringBuilder();
      for (int i = 0; i < n; i++) {
        all.append("GET /login?i=").append(i).append(" HTTP/1.1\r\nHost: app\r\n"
            + "X-Forwarded-For: 203.0.113.8\r\n\r\n");
      }
      c.getOutputStream().write(all.toString().getBytes(StandardCharsets.ISO_8859_1));
      c.getOutputStream().flush();
      c.shutdownOutput();
      // Only now does the client read: the answers the server held back come, every one.
      String answers = new String(c.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(answers.split("HTTP/1.1 403 Forbidden\r\n", -1)).hasSize(n + 1);
    }
    assertThat(upstreamHits.get()).isZero();
    assertThat(s.metrics().deniedCount("http")).isEqualTo(n);
  }

  @Test
  void refusalStatus_perRuleAndGlobal_keepRetryAfter() throws Exception {
    SluiceServer s = serve("");
    get(s, "/api/a", "198.51.100.2");
    HttpResponse<String> api = get(s, "/api/a", "198.51.100.2");
    assertThat(api.statusCode()).isEqualTo(403);
    assertThat(api.body()).contains("\"rule\":\"api\"");
    assertThat(api.headers().firstValue("Retry-After")).isPresent();
    get(s, "/login", "198.51.100.2");
    get(s, "/login", "198.51.100.2");
    HttpResponse<String> login = get(s, "/login", "198.51.100.2");
    assertThat(login.statusCode()).isEqualTo(503);
    assertThat(login.body()).contains("too many requests");
    assertThat(Long.parseLong(login.headers().firstValue("Retry-After").orElseThrow()))
        .isGreaterThan(3000);                                   // the 1 h ban
  }

  @Test
  void banByHand_fromTheCommandLine_refusesTheKey_andUnbanLiftsIt() throws Exception {
    SluiceServer s = serve("");
    String admin = "127.0.0.1:" + s.adminPort();
    assertThat(get(s, "/login", "198.51.100.7").statusCode()).isEqualTo(200);
    Run ban = sluice("admin", "--admin", admin, "ban", "login", "198.51.100.7", "10m");
    assertThat(ban.code()).as(ban.err()).isZero();
    assertThat(ban.out()).isEqualTo("banned 198.51.100.7 under login for 10m\n");
    HttpResponse<String> refused = get(s, "/login", "198.51.100.7");
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
        .isBetween(590L, 600L);
    assertThat(get(s, "/login", "198.51.100.8").statusCode()).isEqualTo(200);
    Run listed = sluice("admin", "--admin", admin, "bans");
    assertThat(listed.out()).contains("login").contains("198.51.100.7");
    Run noBan = sluice("admin", "--admin", admin, "ban", "api", "198.51.100.7", "10m");
    assertThat(noBan.code()).isEqualTo(2);
    assertThat(noBan.err()).contains("has no ban");
    Run bad = sluice("admin", "--admin", admin, "ban", "login", "198.51.100.7", "forever");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).contains("duration");
    assertThat(sluice("admin", "--admin", admin, "unban", "login", "198.51.100.7").code())
        .isZero();
    assertThat(get(s, "/login", "198.51.100.7").statusCode()).isEqualTo(200);
    assertThat(logBytes.toString(StandardCharsets.UTF_8))
        .contains("admin ban rule=login key=198.51.100.7 outcome=\"banned for 10m\" status=200")
        .contains("actor=ops");
  }

  @Test
  void aBanSetThroughOneGateway_holdsOnEveryGatewayOfTheRedis() throws Exception {
    RedisProcess redis = RedisProcess.start();
    open.add(redis);
    String store = "store: {uri: '" + redis.uri() + "', deadline: 2s, startupWait: 30s}\n";
    SluiceServer a = serve(store);
    SluiceServer b = serve(store);
    HttpResponse<String> banned = client.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + a.adminPort() + "/v1/bans/login/198.51.100.9?duration=1h"))
        .header("Authorization", "Bearer " + Files.readString(a.adminTokenFile()).strip())
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(banned.statusCode()).isEqualTo(200);
    assertThat(banned.body()).contains("\"banned\":true");
    assertThat(get(b, "/login", "198.51.100.9").statusCode()).isEqualTo(503);
    assertThat(get(a, "/login", "198.51.100.9").statusCode()).isEqualTo(503);
    assertThat(get(b, "/login", "198.51.100.10").statusCode()).isEqualTo(200);
    // The listing's note of the ban is sent after it, not waited for: polled, 10 s at most.
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    String listed;
    do {
      listed = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + b.adminPort()
          + "/v1/bans?rule=login")).build(), HttpResponse.BodyHandlers.ofString()).body();
    } while (!listed.contains("198.51.100.9") && System.nanoTime() < deadline
        && sleep10());
    assertThat(listed).contains("\"key\":\"198.51.100.9\"");
  }
}
