package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The byte relay ({@link RelayHandler}) against a scripted upstream: what it forwards, the
 * framings it must find the end of, and the failures it answers.
 */
class GatewayRelayIntegrationTests {

  private ScriptedUpstream upstream;
  private Fixtures.Harness h;

  private void start(GatewaySettings g) throws IOException {
    upstream = new ScriptedUpstream();
    PolicyConfig c = Fixtures.withGateway(Fixtures.config(Fixtures.seed000()), g);
    h = new Fixtures.Harness(c, upstream.uri());
  }

  private void start() throws IOException {
    start(GatewaySettings.defaults());
  }

  @AfterEach
  void stop() throws IOException {
    if (h != null) {
      h.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  @Test
  void simpleRequest_isRelayed_withForwardingFields_andWithoutHopByHopOnes() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /api/analysis/1?q=2 HTTP/1.1\r\nHost: shop.example\r\nConnection: keep-alive\r\n"
          + "X-Forwarded-For: 203.0.113.7\r\nAccept: */*\r\n\r\n");
      String r = c.readResponse();
      assertThat(RawHttp.status(r)).isEqualTo(200);
      assertThat(r).endsWith("ok").contains("X-End: kept\r\n")
          .contains("X-RateLimit-Limit: 15\r\n", "X-RateLimit-Remaining: 14\r\n")
          .doesNotContainIgnoringCase("keep-alive").doesNotContain("X-Hop");
    }
    String sent = upstream.heads.get(0);
    assertThat(sent).startsWith("GET /api/analysis/1?q=2 HTTP/1.1\r\n")
        .contains("Accept: */*\r\n", "host: " + upstream.uri().getAuthority() + "\r\n",
            "x-forwarded-for: 127.0.0.1\r\n",
            "forwarded: for=127.0.0.1;proto=http\r\n", "x-forwarded-host: shop.example\r\n",
            "x-forwarded-proto: http\r\n")
        .doesNotContain("Host: shop.example").doesNotContainIgnoringCase("connection:")
        .doesNotContain("203.0.113.7");
    assertThat(h.events.decisions).containsExactly("http:allowed");
  }

  @Test
  void keptAliveClient_reusesOneUpstreamConnection_untilTheUpstreamCloses() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      for (int i = 0; i < 3; i++) {
        c.send("GET /static/" + i + " HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(c.readResponse()).endsWith("ok");
      }
      c.send("GET /close HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok").doesNotContainIgnoringCase("connection:");
      c.send("GET /static/4 HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
    }
    assertThat(upstream.accepted).hasValue(2);
  }

  @Test
  void refusedRequest_isAnsweredByTheLimiterHandler_andCountedOnce() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      for (int i = 0; i < 15; i++) {
        c.send("GET /api/analysis/" + i + " HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(RawHttp.status(c.readResponse())).isEqualTo(200);
      }
      c.send("GET /api/analysis/16 HTTP/1.1\r\nHost: x\r\n\r\n");
      String refused = c.readResponse();
      assertThat(RawHttp.status(refused)).isEqualTo(429);
      assertThat(refused).containsIgnoringCase("retry-after: ");
      // The connection goes on through the full pipeline.
      c.send("GET /static/a HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
    }
    assertThat(h.events.decisions.stream().filter(d -> d.equals("http:refused"))).hasSize(1);
    assertThat(h.events.decisions.stream().filter(d -> d.equals("http:allowed"))).hasSize(15);
    assertThat(upstream.heads).hasSize(16);
  }

  /**
   * A decision that throws (a limiter's bug, not a store error: those are degraded decisions) on
   * a rule that fails closed: 503 from the limiter handler, reported once as a failure and not
   * also as a refusal; on a rule that fails open the relay forwards it, reported once too.
   */
  @Test
  void decisionThatThrows_isReportedOnce_failClosedAndFailOpen() throws Exception {
    upstream = new ScriptedUpstream();
    Policy policy = Policy.builder()
        .rule(Rule.builder("pay").onStoreError(OnStoreError.DENY)
            .limit(Limit.tokenBucket("pay", 10, 10, Duration.ofMinutes(1))).build())
        .rule(Rule.builder("open").limit(Limit.tokenBucket("open", 10, 10, Duration.ofMinutes(1)))
            .build())
        .route(Route.builder("pay").path("/pay/**").rule("pay").build())
        .route(Route.builder("open").path("/open/**").rule("open").build())
        .build();
    h = new Fixtures.Harness(Fixtures.config(policy), upstream.uri(), throwingLimiter());
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /pay/1 HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(RawHttp.status(c.readResponse())).isEqualTo(503);
    }
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /open/1 HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
    }
    assertThat(h.events.failures).containsExactly(
        "http [pay] IllegalStateException", "http [open] IllegalStateException");
    assertThat(h.events.decisions).isEmpty();
    assertThat(h.events.generated).containsExactly(503);
    assertThat(upstream.heads).hasSize(1);
  }

  /** A limiter on a remote store whose asynchronous checks fail with an exception. */
  private static RateLimiter throwingLimiter() {
    RateLimiter real = RateLimiter.of(Store.memory(new Fixtures.FakeTicker(), 100));
    Store remote = (Store) Proxy.newProxyInstance(Store.class.getClassLoader(),
        new Class<?>[] {Store.class}, (p, m, args) -> m.getName().equals("isLocal") ? false
            : m.invoke(real.store(), args));
    return (RateLimiter) Proxy.newProxyInstance(RateLimiter.class.getClassLoader(),
        new Class<?>[] {RateLimiter.class}, (p, m, args) -> switch (m.getName()) {
          case "checkAsync" -> CompletableFuture.failedFuture(new IllegalStateException("bug"));
          case "store" -> remote;
          default -> m.invoke(real, args);
        });
  }

  @Test
  void requestsTheRelayDoesNotForward_takeTheFullPipeline() throws Exception {
    start();
    String[] requests = {
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
        "GET /static/a HTTP/1.0\r\nHost: x\r\n\r\n",
        "GET /static/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /static/a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        "GET /static/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3"
            + "\r\n\r\n0\r\n\r\n",
        "GET /static/a HTTP/1.1\nHost: x\n\n",
        "GET /static/a HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n",
        "GET http://x/static/a HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    for (String request : requests) {
      try (RawHttp c = new RawHttp(h.gateway.port())) {
        c.send(request);
        String r = c.readResponse();
        assertThat(r).as(request).isNotNull();
        int status = RawHttp.status(r);
        assertThat(status).as(request).isIn(200, 400);
      }
    }
    // Still relaying afterwards.
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /static/b HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
    }
  }

  @Test
  void pipelinedRequests_areHandedOver_andAnsweredInOrder() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /static/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /head HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
      assertThat(c.readResponse()).endsWith("hello");
    }
  }

  @Test
  void chunkedResponse_isRelayedWhole_andTheConnectionGoesOn() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n");
      String r = readUntil(c.socket.getInputStream(), "X-Sum: 11\r\n\r\n");
      assertThat(r).startsWith("HTTP/1.1 200 OK\r\n").contains("Transfer-Encoding: chunked\r\n")
          .doesNotContain("Trailer:")
          .endsWith("\r\n\r\n5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Sum: 11\r\n\r\n");
      c.send("GET /static/2 HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
    }
    assertThat(upstream.accepted).hasValue(1);
  }

  @Test
  void bodyEndedByClose_reachesTheClient_whichIsThenClosed() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /until-close HTTP/1.1\r\nHost: x\r\n\r\n");
      String r = readToEnd(c.socket.getInputStream());
      assertThat(r).startsWith("HTTP/1.1 200 OK\r\n").contains("connection: close\r\n")
          .endsWith("\r\n\r\nall of it");
    }
  }

  @Test
  void bodilessResponses_endAtTheirHead() throws Exception {
    start();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("HEAD /head HTTP/1.1\r\nHost: x\r\n\r\n");
      String head = readUntil(c.socket.getInputStream(), "\r\n\r\n");
      assertThat(head).startsWith("HTTP/1.1 200 OK\r\n").contains("Content-Length: 5\r\n");
      c.send("GET /no-content HTTP/1.1\r\nHost: x\r\n\r\n");
      String none = readUntil(c.socket.getInputStream(), "\r\n\r\n");
      assertThat(none).startsWith("HTTP/1.1 204 No Content\r\n").contains("X-Kind: none");
      c.send("GET /early HTTP/1.1\r\nHost: x\r\n\r\n");
      String early = c.readResponse();
      assertThat(early).startsWith("HTTP/1.1 103 Early Hints\r\n\r\n");
      assertThat(c.readResponse()).startsWith("HTTP/1.1 200 OK").endsWith("later");
    }
    assertThat(upstream.accepted).hasValue(1);
  }

  @Test
  void upstreamFailures_are502And504_withTheLimitHeaders() throws Exception {
    GatewaySettings d = GatewaySettings.defaults();
    start(d.toBuilder().upstreamResponseTimeout(Duration.ofMillis(300)).build());
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /garbage HTTP/1.1\r\nHost: x\r\n\r\n");
      String bad = c.readResponse();
      assertThat(RawHttp.status(bad)).isEqualTo(502);
      assertThat(bad).contains("\"error\":\"bad gateway\"");
      c.send("GET /api/analysis/silent HTTP/1.1\r\nHost: x\r\n\r\n");
      String late = c.readResponse();
      assertThat(RawHttp.status(late)).isEqualTo(504);
      assertThat(late).contains("X-RateLimit-Remaining: 14\r\n");
      c.send("GET /static/after HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
    }
    assertThat(h.events.generated).containsExactly(502, 504);
    assertThat(h.events.upstreamFailures).hasSize(2);
  }

  @Test
  void deadUpstream_is502() throws Exception {
    h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()), EchoUpstream.deadPort());
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /static/x HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(RawHttp.status(c.readResponse())).isEqualTo(502);
      c.send("GET /static/y HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(RawHttp.status(c.readResponse())).isEqualTo(502);
    }
  }

  @Test
  void trickledHead_isClosedByTheHeadTimeout() throws Exception {
    GatewaySettings d = GatewaySettings.defaults();
    start(d.toBuilder().handshakeTimeout(Duration.ofMillis(300)).build());
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /static/a HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.readResponse()).endsWith("ok");
      c.send("GET /static/b HTTP/1.1\r\nX-Slow: ");
      assertThat(c.closedByServer()).isTrue();
    }
    assertThat(upstream.heads).hasSize(1);
  }

  private static String readUntil(InputStream in, String end) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (!out.toString(StandardCharsets.ISO_8859_1).endsWith(end)) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      out.write(b);
    }
    return out.toString(StandardCharsets.ISO_8859_1);
  }

  private static String readToEnd(InputStream in) throws IOException {
    try {
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the gateway did not close the connection", e);
    }
  }
}
