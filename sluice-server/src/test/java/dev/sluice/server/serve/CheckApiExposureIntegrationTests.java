package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.gateway.EchoUpstream;
import dev.sluice.gateway.RawHttp;
import dev.sluice.server.Closer;
import dev.sluice.server.Log;
import dev.sluice.server.ServeOptions;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.TlsOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20, item 1: {@code POST /v1/check} was served on the public gateway listener, always, to
 * anyone: any client could spend any key's quota and get any address banned, and the app behind
 * the gateway lost that path. Now the API is off on the public listener (the path goes to the
 * upstream like any other), served where the operator puts it (its own listener, or the admin
 * listener behind the token), with a limit of its own. A real {@code sluice serve}, a raw-socket
 * client, and an upstream that echoes what reached it.
 */
class CheckApiExposureIntegrationTests {

  static final String POLICY = String.join("\n",
      "rules:",
      "  login:",
      "    limits: [{type: token-bucket, burst: 10, refill: 1, period: 1h}]",
      "    ban: 1h",
      "routes:",
      "  - {name: open, paths: [/**]}",
      "");
  static final String LOGIN = "{\"rule\":\"login\",\"key\":{\"ip\":\"203.0.113.50\"}}";

  @TempDir
  Path dir;

  final ByteArrayOutputStream log = new ByteArrayOutputStream();
  final Closer closing = new Closer();
  EchoUpstream upstream;
  SluiceServer server;

  @AfterEach
  void stop() throws Exception {
    closing.close();
  }

  SluiceServer serve(String policy, InetSocketAddress admin, Path token, String checkApi)
      throws Exception {
    upstream = new EchoUpstream();
    closing.add(upstream);
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, policy);
    server = SluiceServer.start(new ServeOptions(file, new InetSocketAddress("127.0.0.1", 0),
        upstream.uri(), admin, null, Duration.ofSeconds(1), 1, null, false, token,
        TlsOptions.NONE, checkApi), Map.of(),
        new Log(new PrintStream(log, true, StandardCharsets.UTF_8)));
    closing.add(server);
    return server;
  }

  static String post(int port, String body, String... fields) throws Exception {
    try (RawHttp c = new RawHttp(port)) {
      StringBuilder req = new StringBuilder("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      for (String f : fields) {
        req.append(f).append("\r\n");
      }
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      req.append("Content-Type: application/json\r\nContent-Length: ").append(b.length)
          .append("\r\nConnection: close\r\n\r\n").append(body);
      c.send(req.toString().getBytes(StandardCharsets.UTF_8));
      return c.readResponse();
    }
  }

  static String get(int port, String path) throws Exception {
    try (RawHttp c = new RawHttp(port)) {
      c.send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      return c.readResponse();
    }
  }

  static String body(String response) {
    return response.substring(response.indexOf("\r\n\r\n") + 4);
  }

  @Test
  void publicListener_passesV1CheckToTheUpstream_andSpendsNothing() throws Exception {
    serve(POLICY, null, null, "127.0.0.1:0");
    for (int i = 0; i < 12; i++) {
      String r = post(server.port(), LOGIN);
      assertThat(RawHttp.status(r)).as(r).isEqualTo(200);
      assertThat(r.toLowerCase()).contains("x-upstream: echo");
      assertThat(body(r)).contains("method=POST", "uri=/v1/check",
          "bodyBytes=" + LOGIN.length());
    }
    String other = get(server.port(), "/v1/check?x=1");
    assertThat(body(other)).contains("method=GET", "uri=/v1/check?x=1");
    // Twelve posts reached the app, none was a decision: the key still has its whole burst,
    // where before the twelfth would have been refused and the address banned.
    assertThat(body(post(server.checkPort(), LOGIN))).startsWith("{\"allowed\":true")
        .contains("\"limit\":10,\"remaining\":9");
  }

  @Test
  void ownListener_decides_andServesNothingElse() throws Exception {
    serve(POLICY, null, null, "127.0.0.1:0");
    String r = post(server.checkPort(), LOGIN);
    assertThat(RawHttp.status(r)).isEqualTo(200);
    assertThat(r).contains("application/json; charset=utf-8");
    assertThat(body(r)).startsWith("{\"allowed\":true,\"rule\":\"login\"")
        .contains("\"remaining\":9");
    assertThat(RawHttp.status(get(server.checkPort(), "/v1/policy"))).isEqualTo(404);
    String wrongMethod = get(server.checkPort(), "/v1/check");
    assertThat(RawHttp.status(wrongMethod)).isEqualTo(405);
    assertThat(wrongMethod).contains("allow: POST");
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("decision API listening "
        + "address=http://127.0.0.1:" + server.checkPort() + "/v1/check");
  }

  @Test
  void adminListener_withoutTheToken_is401_andDecidesNothing() throws Exception {
    Path token = dir.resolve("token");
    Files.writeString(token, "s3cret-token-of-some-length\n");
    serve(POLICY, new InetSocketAddress("127.0.0.1", 0), token, "admin");
    assertThat(RawHttp.status(post(server.adminPort(), LOGIN))).isEqualTo(401);
    assertThat(RawHttp.status(post(server.adminPort(), LOGIN, "Authorization: Bearer nope")))
        .isEqualTo(401);
    String ok = post(server.adminPort(), LOGIN, "Authorization: Bearer s3cret-token-of-some-length");
    assertThat(RawHttp.status(ok)).isEqualTo(200);
    // The two refused calls spent nothing: this is the key's first decision.
    assertThat(body(ok)).startsWith("{\"allowed\":true").contains("\"remaining\":9");
    // And the public listener still passes the path to the app.
    assertThat(body(post(server.port(), LOGIN))).contains("uri=/v1/check");
  }

  @Test
  void pastItsOwnLimit_is429_withRetryAfter_andDecidesNothing() throws Exception {
    serve(POLICY + "rls:\n  checkApiLimit: {burst: 2, refill: 1, period: 1h}\n",
        new InetSocketAddress("127.0.0.1", 0), null, "127.0.0.1:0");
    assertThat(body(post(server.checkPort(), LOGIN))).contains("\"remaining\":9");
    assertThat(body(post(server.checkPort(), LOGIN))).contains("\"remaining\":8");
    String limited = post(server.checkPort(), LOGIN);
    assertThat(RawHttp.status(limited)).isEqualTo(429);
    assertThat(limited.toLowerCase()).contains("retry-after: 3600");
    assertThat(body(limited)).isEqualTo("{\"error\":\"too many requests\",\"detail\":\"the "
        + "decision API answers at most 2 at once and 1 per 1h (rls.checkApiLimit)\","
        + "\"retry_after_seconds\":3600}");
    assertThat(RawHttp.status(post(server.checkPort(), LOGIN))).isEqualTo(429);
    assertThat(body(get(server.adminPort(), "/metrics")))
        .contains("sluice_rls_check_limited_total 2.0");
  }

  @Test
  void policyMayPutItOnTheGateway_explicitly_andTheStartSaysWhatThatMeans() throws Exception {
    serve(POLICY + "rls:\n  checkApi: gateway\n", null, null, null);
    String r = post(server.port(), LOGIN);
    assertThat(r.toLowerCase()).doesNotContain("x-upstream");
    assertThat(body(r)).startsWith("{\"allowed\":true,\"rule\":\"login\"");
    assertThat(server.checkPort()).isEqualTo(-1);
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("the decision API is on the "
        + "gateway's public listener (rls.checkApi gateway): any client that reaches it can "
        + "spend any key's quota and get any address banned");
  }

  @Test
  void onTheAdminListener_withTheAdminListenerOff_theStartFailsAndSaysWhy() {
    assertThatThrownBy(() -> serve(POLICY, null, null, "admin"))
        .hasMessageContaining("--check-api admin: the admin listener is off (--admin off)");
  }
}
