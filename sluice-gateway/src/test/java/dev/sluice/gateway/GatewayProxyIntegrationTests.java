package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.core.Rule;
import dev.sluice.policy.CorsSettings;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The gateway as a reverse proxy in front of real upstreams. */
class GatewayProxyIntegrationTests {

  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private Fixtures.Harness h;
  private EchoUpstream echo;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
    if (echo != null) {
      echo.close();
    }
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(h.uri(path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private void startWithEcho(PolicyConfig config) throws Exception {
    echo = new EchoUpstream();
    h = new Fixtures.Harness(config, echo.uri());
  }

  /** From a trusted proxy the forwarding headers are kept, and the peer appended. */
  @Test
  void forwardingHeaders_ofATrustedProxy_getThePeerAppended() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000Builder().clientAddress(
        ClientAddressResolver.builder().trustedProxies(List.of("127.0.0.0/8")).build()).build()));
    HttpResponse<String> r = get("/echo?x=1", "X-Forwarded-For", "203.0.113.9",
        "Forwarded", "for=203.0.113.9", "X-Forwarded-Proto", "https", "X-Real-IP", "203.0.113.9",
        "True-Client-IP", "203.0.113.9");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("X-Upstream")).hasValue("echo");
    assertThat(r.body()).contains("true-client-ip: 203.0.113.9\n");
    assertThat(r.body()).contains("uri=/echo?x=1\n")
        .contains("x-forwarded-for: 203.0.113.9, 127.0.0.1\n")
        .contains("forwarded: for=203.0.113.9, for=127.0.0.1;proto=http\n")
        .contains("host: " + echo.uri().getAuthority() + "\n")
        .contains("x-forwarded-host: 127.0.0.1:" + h.gateway.port() + "\n")
        .contains("x-forwarded-proto: https\n").contains("x-real-ip: 203.0.113.9\n");
  }

  /**
   * Issue 20, item 5: a client's own X-Forwarded-Host, -Proto and X-Real-IP reached the upstream
   * (which builds redirect URLs from them) when no proxy is trusted. They are replaced.
   */
  @Test
  void issue20_forwardingHeaders_ofAnUntrustedClient_areReplacedByTheGatewaysOwn()
      throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    HttpResponse<String> r = get("/echo?x=1", "X-Forwarded-For", "203.0.113.9",
        "Forwarded", "for=203.0.113.9", "X-Forwarded-Host", "evil.example",
        "X-Forwarded-Proto", "https", "X-Forwarded-Port", "444", "X-Real-IP", "203.0.113.9",
        "True-Client-IP", "203.0.113.9", "CF-Connecting-IP", "203.0.113.9");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("x-forwarded-for: 127.0.0.1\n")
        .contains("forwarded: for=127.0.0.1;proto=http\n")
        .contains("x-forwarded-host: 127.0.0.1:" + h.gateway.port() + "\n")
        .contains("x-forwarded-proto: http\n").contains("x-real-ip: 127.0.0.1\n")
        .doesNotContain("203.0.113.9").doesNotContain("evil.example").doesNotContain("x-forwarded-port")
        .doesNotContain("true-client-ip").doesNotContain("cf-connecting-ip")
        .doesNotContain("https");
  }

  @Test
  void forwardingHeaders_withoutIncoming_areCreated() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    HttpResponse<String> r = get("/echo");
    assertThat(r.body()).contains("x-forwarded-for: 127.0.0.1\n")
        .contains("forwarded: for=127.0.0.1;proto=http\n");
  }

  /** The upstream port a request arrived from: which upstream connection carried it. */
  private static String upstreamPort(String response) {
    int at = response.indexOf("peerPort=");
    return response.substring(at + 9, response.indexOf('\n', at));
  }

  private String oneRequestOnItsOwnConnection() throws Exception {
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
      String r = c.readResponse();
      assertThat(RawHttp.status(r)).isEqualTo(200);
      assertThat(c.closedByServer()).isTrue();
      return upstreamPort(r);
    }
  }

  @Test
  void upstreamConnections_outliveTheirClient_andServeTheNextOneOnTheSameLoop() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    // Two I/O threads take new connections in turn: the first and third share a loop.
    String first = oneRequestOnItsOwnConnection();
    String second = oneRequestOnItsOwnConnection();
    String third = oneRequestOnItsOwnConnection();
    assertThat(third).as("the first client's upstream connection, from its loop's pool")
        .isEqualTo(first);
    assertThat(second).isNotEqualTo(first);
  }

  /**
   * One pool for both owners: an upstream connection an HTTP/1.1 client left serves the next
   * HTTP/2 stream on its loop, and the reverse (each owner sees its own kind: bytes for the relay,
   * HTTP objects for the stream).
   */
  @Test
  void upstreamConnections_serveHttp1AndHttp2Clients_fromOnePool() throws Exception {
    try (RecordingUpstream up = new RecordingUpstream()) {
      h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()), up.uri());
      // Two I/O threads take new connections in turn: pairs land on both loops.
      for (boolean h2 : new boolean[] {false, false, true, true, false, false}) {
        if (h2) {
          try (java.net.Socket s = new java.net.Socket("127.0.0.1", h.gateway.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(new H2Frames().preface().headers(1, true, ":method", "GET",
                ":path", "/h2", ":scheme", "http", ":authority", "x").take());
            assertThat(H2Frames.answer(s.getInputStream(), 1)).isEqualTo("200");
          }
        } else {
          try (RawHttp c = new RawHttp(h.gateway.port())) {
            c.send("GET /h1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
            assertThat(RawHttp.status(c.readResponse())).isEqualTo(200);
          }
        }
      }
      assertThat(up.lines()).containsExactly("GET /h1 HTTP/1.1", "GET /h1 HTTP/1.1",
          "GET /h2 HTTP/1.1", "GET /h2 HTTP/1.1", "GET /h1 HTTP/1.1", "GET /h1 HTTP/1.1");
      assertThat(up.accepted.get()).as("upstream connections, one per loop").isEqualTo(2);
    }
  }

  @Test
  void forwardedNode_quotesAndBracketsIpv6() {
    assertThat(Forwarding.node("2001:db8::1")).isEqualTo("\"[2001:db8::1]\"");
    assertThat(Forwarding.node("192.0.2.1")).isEqualTo("192.0.2.1");
  }

  @Test
  void hopByHopHeaders_areNotForwarded() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, X-Secret\r\n"
          + "X-Secret: 1\r\nKeep-Alive: timeout=5\r\nX-Kept: yes\r\n\r\n");
      String r = c.readResponse();
      assertThat(r).contains("x-kept: yes").doesNotContain("x-secret").doesNotContain("keep-alive: timeout");
    }
  }

  @Test
  void http10Client_getsAnUnchunkedBody_andTheConnectionCloses() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /chunked/x HTTP/1.0\r\nHost: x\r\n\r\n");
      String head = c.readResponse();
      assertThat(head).startsWith("HTTP/1.").doesNotContainIgnoringCase("transfer-encoding");
      byte[] rest = c.socket.getInputStream().readAllBytes();
      assertThat(new String(rest, java.nio.charset.StandardCharsets.UTF_8)).contains("uri=/chunked/x");
    }
  }

  @Test
  void connectionClose_isHonoured_afterTheResponse() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      String r = c.readResponse();
      assertThat(RawHttp.status(r)).isEqualTo(200);
      assertThat(r).containsIgnoringCase("connection: close");
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void bodies_streamBothWays() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    byte[] body = new byte[300_000];
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(h.uri("/chunked/upload"))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("method=POST").contains("bodyBytes=300000");
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).hasValue("30");
  }

  /**
   * Issue 7: the 502 showed clients the upstream's internal address and Netty's error text, and
   * nothing was logged. The body is generic; the address and cause go to the events (the log).
   */
  @Test
  void upstreamDown_is502_withAGenericBody_andTheCauseReported() throws Exception {
    PolicyConfig c = Fixtures.withCors(Fixtures.config(Fixtures.seed000()), new CorsSettings(
        List.of("*"), List.of(), List.of(), List.of(), false, Duration.ZERO));
    URI dead = EchoUpstream.deadPort();
    h = new Fixtures.Harness(c, dead);
    HttpResponse<String> r = get("/anything");
    assertThat(r.statusCode()).isEqualTo(502);
    assertThat(r.body()).isEqualTo("{\"error\":\"bad gateway\"}");
    assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(r.headers().firstValue("Access-Control-Allow-Origin")).hasValue("*");
    assertThat(h.events.generated).containsExactly(502);
    assertThat(h.events.upstreamFailures).containsExactly("502 " + dead.getAuthority()
        + " could not connect: connection refused");

    HttpResponse<String> page = get("/anything", "Accept", "text/html,*/*;q=0.8");
    assertThat(page.statusCode()).isEqualTo(502);
    assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("text/html"));
    assertThat(page.body()).contains("<h1>502 Bad Gateway</h1>")
        .doesNotContain(dead.getAuthority()).doesNotContain("refused");
  }

  @Test
  void upstreamSilent_is504_withAGenericBody_andTheCauseReported() throws Exception {
    try (EchoUpstream.Silent silent = new EchoUpstream.Silent()) {
      GatewaySettings d = GatewaySettings.defaults();
      PolicyConfig c = Fixtures.withGateway(Fixtures.config(Fixtures.seed000()), d.toBuilder()
          .upstreamResponseTimeout(Duration.ofMillis(300)).build());
      h = new Fixtures.Harness(c, silent.uri());
      HttpResponse<String> r = get("/slow");
      assertThat(r.statusCode()).isEqualTo(504);
      assertThat(r.body()).isEqualTo("{\"error\":\"gateway timeout\"}");
      assertThat(h.events.generated).containsExactly(504);
      assertThat(h.events.upstreamFailures).containsExactly("504 "
          + silent.uri().getAuthority() + " no response within 300 ms");
    }
  }

  /**
   * An HTTP/2 stream's owner fails as the relay does: a dead upstream is 502 and a silent one
   * 504, each reported once with its cause, and the connection answers its next stream.
   */
  @Test
  void http2Streams_get502And504_andTheCauseReported() throws Exception {
    GatewaySettings d = GatewaySettings.defaults();
    PolicyConfig c = Fixtures.withGateway(Fixtures.config(Fixtures.seed000()), d.toBuilder()
        .upstreamResponseTimeout(Duration.ofMillis(300)).build());
    URI dead = EchoUpstream.deadPort();
    h = new Fixtures.Harness(c, dead);
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", h.gateway.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(new H2Frames().preface().get(1, "GET", "/a").take());
      assertThat(H2Frames.answer(s.getInputStream(), 1)).isEqualTo("502");
      // The next stream is answered too (its status is HPACK-indexed on the first one's).
      s.getOutputStream().write(new H2Frames().get(3, "GET", "/b").take());
      assertThat(H2Frames.readUntil(s.getInputStream(), H2Frames.HEADERS, 3))
          .isEqualTo(H2Frames.HEADERS);
    }
    assertThat(h.events.upstreamFailures).containsExactly(
        "502 " + dead.getAuthority() + " could not connect: connection refused",
        "502 " + dead.getAuthority() + " could not connect: connection refused");
    h.close();
    try (EchoUpstream.Silent silent = new EchoUpstream.Silent()) {
      h = new Fixtures.Harness(c, silent.uri());
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", h.gateway.port())) {
        s.setSoTimeout(10_000);
        s.getOutputStream().write(new H2Frames().preface().get(1, "GET", "/slow").take());
        assertThat(H2Frames.answer(s.getInputStream(), 1)).isEqualTo("504");
      }
      assertThat(h.events.generated).containsExactly(504);
      assertThat(h.events.upstreamFailures).containsExactly("504 "
          + silent.uri().getAuthority() + " no response within 300 ms");
    }
  }

  /** Seed 004: one trusted proxy, so only the right-most entry counts; the prefix is the caller's. */
  @Test
  void xff_spoofedPrefix_withTrustedHops1_doesNotMintBuckets() throws Exception {
    Policy policy = Policy.builder()
        .rule(Rule.builder("global").limit(Limit.fixedWindow("global", 2, Duration.ofMinutes(1))).build())
        .global("global")
        .clientAddress(ClientAddressResolver.builder().trustedHops(1).build())
        .build();
    startWithEcho(Fixtures.config(policy));
    assertThat(get("/graphql", "X-Forwarded-For", "a.a.a.a, 7.7.7.7").statusCode()).isEqualTo(200);
    assertThat(get("/graphql", "X-Forwarded-For", "b.b.b.b, 7.7.7.7").statusCode()).isEqualTo(200);
    assertThat(get("/graphql", "X-Forwarded-For", "c.c.c.c, 7.7.7.7").statusCode()).isEqualTo(429);
    // another client behind the same proxy has its own bucket
    assertThat(get("/graphql", "X-Forwarded-For", "8.8.8.8").statusCode()).isEqualTo(200);
  }

  @Test
  void xff_fromUntrustedPeer_isIgnored() throws Exception {
    Policy policy = Policy.builder()
        .rule(Rule.builder("global").limit(Limit.fixedWindow("global", 2, Duration.ofMinutes(1))).build())
        .global("global")
        .build();
    startWithEcho(Fixtures.config(policy));
    assertThat(get("/g", "X-Forwarded-For", "1.1.1.1").statusCode()).isEqualTo(200);
    assertThat(get("/g", "X-Forwarded-For", "2.2.2.2").statusCode()).isEqualTo(200);
    assertThat(get("/g", "X-Forwarded-For", "3.3.3.3").statusCode()).isEqualTo(429);
  }

  @Test
  void shadowRule_forwards_andReports() throws Exception {
    Policy policy = Policy.builder()
        .rule(Rule.builder("analysis").mode(Mode.SHADOW)
            .limit(Limit.tokenBucket("analysis", 1, 30, Duration.ofMinutes(1))).build())
        .route(Route.builder("analysis").path("/api/analysis/**").rule("analysis").build())
        .build();
    startWithEcho(Fixtures.config(policy));
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = get("/api/analysis/x");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).contains("uri=/api/analysis/x");
    }
    assertThat(h.events.decisions).containsExactly("http:allowed", "http:allowed:shadow=analysis",
        "http:allowed:shadow=analysis");
  }

  @Test
  void reload_takesEffectForTheNextRequest() throws Exception {
    startWithEcho(Fixtures.config(Fixtures.seed000()));
    for (int i = 0; i < 15; i++) {
      get("/api/analysis/x");
    }
    assertThat(get("/api/analysis/x").statusCode()).isEqualTo(429);
    Policy relaxed = Policy.builder()
        .rule(Rule.builder("analysis2").limit(Limit.tokenBucket("analysis2", 100, 30, Duration.ofMinutes(1))).build())
        .route(Route.builder("analysis").path("/api/analysis/**").rule("analysis2").build())
        .build();
    h.config.set(Fixtures.config(relaxed));
    HttpResponse<String> r = get("/api/analysis/x");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"analysis2\";q=100;w=200");
  }

  @Test
  void badUpstreamUrl_isRejectedAtStart() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Gateway.builder()
        .upstream(URI.create("https://example.com/app")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("upstream : https://example.com/app");
  }
}
