package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, item 3: after a framing error of the upstream's (a body on a HEAD response, bytes
 * after a response, a broken chunked body, both framings, a coding that is not chunked) the full
 * pipeline kept and re-pooled the upstream connection, and the next request on it, possibly
 * another client's, got a 504, a 502 or a close. On both paths (HTTP/1.1 through the relay,
 * HTTP/2 streams through the Netty pipeline) the connection is now closed, never pooled: the
 * next request is answered by the upstream on another connection.
 */
class UpstreamFramingIntegrationTests {

  private ScriptedUpstream upstream;
  private Fixtures.Harness h;

  @BeforeEach
  void start() throws IOException {
    upstream = new ScriptedUpstream();
    // One I/O loop, so one pool: a connection that is not reused shows as a new one.
    h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()), upstream.uri(), null, 1);
  }

  @AfterEach
  void stop() throws IOException {
    h.close();
    upstream.close();
  }

  /** Sends {@code request} on a new connection; the response's status line, or "closed". */
  private String http1(String request) throws IOException {
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send(request);
      String r = request.startsWith("HEAD ") ? c.readHead() : c.readResponse();
      return r == null ? "closed" : r.substring(0, r.indexOf("\r\n"));
    }
  }

  /**
   * The upstream connection that carried {@code brokenPath} ends (the gateway closed it: the
   * upstream sees it end), and the next request is answered by the upstream on another one.
   * Which one is the pool's business: a connection that is not the broken one.
   */
  private void brokenConnectionEnds_andTheNextRequestGetsAnother(String brokenPath)
      throws Exception {
    int broken = brokenConnectionEnds(brokenPath);
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /static/next HTTP/1.1\r\nHost: x\r\n\r\n");
      String r = c.readResponse();
      assertThat(RawHttp.status(r)).isEqualTo(200);
      assertThat(r).endsWith("ok");
    }
    assertThat(upstream.connectionOfLast("/static/next")).as("the next request's connection")
        .isNotEqualTo(broken).isPositive();
  }

  /** Awaits the end of the connection that read {@code path} last; returns its number. */
  private int brokenConnectionEnds(String path) throws InterruptedException {
    int broken = upstream.connectionOfLast(path);
    assertThat(broken).as(path + " reached the upstream").isPositive();
    long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
    while (!upstream.endedConnections.contains(broken) && System.nanoTime() < deadline) {
      Thread.sleep(5);   // the close is on its way: a condition awaited, not a time
    }
    assertThat(upstream.endedConnections).as("the broken connection ended").contains(broken);
    return broken;
  }

  @Test
  void http1_framingErrors_closeTheUpstreamConnection() throws Exception {
    for (String[] c : List.of(
        new String[] {"HEAD /static/head-body HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200 OK"},
        new String[] {"GET /static/extra HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200 OK"},
        new String[] {"GET /static/both HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 502 Bad Gateway"},
        new String[] {"GET /static/te-identity HTTP/1.1\r\nHost: x\r\n\r\n",
            "HTTP/1.1 502 Bad Gateway"})) {
      assertThat(http1(c[0])).as(c[0]).isEqualTo(c[1]);
      brokenConnectionEnds_andTheNextRequestGetsAnother(c[0].substring(c[0].indexOf(' ') + 1,
          c[0].indexOf(" HTTP/")));
    }
  }

  /** A chunked body that breaks after its head went out: the client's connection is cut. */
  @Test
  void http1_brokenChunkedResponse_cutsTheClient_andTheUpstreamConnection() throws Exception {
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /static/broken-chunked HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.closedByServer()).isTrue();
    }
    brokenConnectionEnds_andTheNextRequestGetsAnother("/static/broken-chunked");
  }

  /** curl over h2c (prior knowledge), one connection: the status of each URL, in order. */
  private static List<String> h2(String... urls) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("curl", "-s", "--max-time", "10",
        "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}\\n"));
    for (String url : urls) {
      cmd.add(url);
    }
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    return out.lines().toList();
  }

  @Test
  void http2_framingErrors_closeTheUpstreamConnection_andTheNextStreamIsServed()
      throws Exception {
    String base = "http://127.0.0.1:" + h.gateway.port();
    for (String path : List.of("/static/extra", "/static/both", "/static/te-identity",
        "/static/broken-chunked")) {
      h2(base + path);
      int broken = brokenConnectionEnds(path);
      assertThat(h2(base + "/static/next")).as(path + ", then the next stream")
          .containsExactly("200");
      assertThat(upstream.connectionOfLast("/static/next")).as(path).isNotEqualTo(broken);
    }
    h2("-I", base + "/static/head-body");
    int broken = brokenConnectionEnds("/static/head-body");
    assertThat(h2(base + "/static/next")).containsExactly("200");
    assertThat(upstream.connectionOfLast("/static/next")).isNotEqualTo(broken);
  }
}
