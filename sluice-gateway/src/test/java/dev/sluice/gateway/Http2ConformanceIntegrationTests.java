package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 requests (RFC 9113 section 8) in frames written by the test on a raw h2c connection,
 * against a real gateway and an upstream that records what it received whole: malformed requests
 * are refused (a stream reset or an error status) and reach nothing; every spelling of a limited
 * path, the absolute {@code :path} of issue 20 among them, is counted by its route.
 */
class Http2ConformanceIntegrationTests {

  private RecordingUpstream upstream;
  private Fixtures.Harness h;

  @BeforeEach
  void start() throws IOException {
    upstream = new RecordingUpstream();
    Policy policy = Policy.builder()
        .rule(Rule.builder("strict").limit(Limit.fixedWindow("strict", 1, Duration.ofMinutes(1)))
            .build())
        .rule(Rule.builder("all").limit(Limit.fixedWindow("all", 1_000_000, Duration.ofMinutes(1)))
            .build())
        .route(Route.builder("strict").path("/strict/**").rule("strict").build())
        .global("all")
        .build();
    h = new Fixtures.Harness(Fixtures.config(policy), upstream.uri());
  }

  @AfterEach
  void stop() throws IOException {
    h.close();
    upstream.close();
  }

  /** Sends {@code frames} after the preface on a new connection: the answer to stream 1. */
  private String send(H2Frames frames) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", h.gateway.port()), 5000);
      s.setSoTimeout(10_000);
      byte[] body = frames.take();
      byte[] preface = new H2Frames().preface().take();
      s.getOutputStream().write(preface);
      s.getOutputStream().write(body);
      s.getOutputStream().flush();
      return H2Frames.answer(s.getInputStream(), 1);
    }
  }

  private static H2Frames request(String... nameValues) {
    return new H2Frames().headers(1, true, nameValues);
  }

  @Test
  void malformedRequests_areRefused_andReachNothing() throws Exception {
    List<H2Frames> malformed = List.of(
        // pseudo-headers: missing, unknown, twice (Netty's decoder puts one that follows a
        // regular field first, RFC 9113 8.3's malformed case, with no other reading than ours)
        request(":method", "GET", ":scheme", "http", ":authority", "x"),
        request(":method", "GET", ":path", "/open/a", ":scheme", "http", ":authority", "x",
            ":bogus", "1"),
        request(":method", "GET", ":path", "/open/a", ":path", "/open/b", ":scheme", "http",
            ":authority", "x"),
        // field names in upper case, connection-specific fields
        request(":method", "GET", ":path", "/open/a", ":scheme", "http", ":authority", "x",
            "X-Upper", "1"),
        request(":method", "GET", ":path", "/open/a", ":scheme", "http", ":authority", "x",
            "connection", "keep-alive"),
        request(":method", "GET", ":path", "/open/a", ":scheme", "http", ":authority", "x",
            "te", "gzip"),
        // the target: empty, an encoded slash, a backslash, CONNECT
        request(":method", "GET", ":path", "", ":scheme", "http", ":authority", "x"),
        request(":method", "GET", ":path", "/strict%2Fa", ":scheme", "http", ":authority", "x"),
        request(":method", "GET", ":path", "/x\\..\\strict/a", ":scheme", "http", ":authority",
            "x"),
        request(":method", "CONNECT", ":authority", "127.0.0.1:22"),
        // a declared length the DATA does not have (RFC 9113 8.1.1)
        new H2Frames().headers(1, false, ":method", "POST", ":path", "/open/a", ":scheme",
            "http", ":authority", "x", "content-length", "10")
            .data(1, true, "abc".getBytes(StandardCharsets.US_ASCII)));
    for (int i = 0; i < malformed.size(); i++) {
      assertThat(send(malformed.get(i))).as("malformed request %d", i)
          .isIn("RST_STREAM", "GOAWAY", "400", "405", "EOF");
    }
    assertThat(upstream.requests).as("what reached the upstream").isEmpty();
  }

  /** Issue 20, item 2: an absolute :path over h2c walked around path routes. */
  @Test
  void issue20_everySpellingOfAStrictPath_isCountedByItsRoute() throws Exception {
    List<String> paths = List.of("/strict/a", "http://x/strict/a", "//strict//a",
        "/x/../strict/a", "/strict;v=1/a", "/%73trict/a");
    int ok = 0;
    for (String path : paths) {
      String answer = send(request(":method", "GET", ":path", path, ":scheme", "http",
          ":authority", "x"));
      assertThat(answer).as(path).isIn("200", "429");
      ok += answer.equals("200") ? 1 : 0;
    }
    assertThat(ok).isEqualTo(1);
    assertThat(upstream.lines()).containsExactly("GET /strict/a HTTP/1.1");
    // An absolute :path whose authority is not :authority is refused.
    assertThat(send(request(":method", "GET", ":path", "http://y/open/a", ":scheme", "http",
        ":authority", "x"))).isEqualTo("400");
  }

  @Test
  void wellFormedRequestWithABody_isForwardedWhole() throws Exception {
    String answer = send(new H2Frames().headers(1, false, ":method", "POST", ":path", "/open/a",
        ":scheme", "http", ":authority", "x", "content-length", "5")
        .data(1, true, "hello".getBytes(StandardCharsets.US_ASCII)));
    assertThat(answer).isEqualTo("200");
    assertThat(upstream.requests).hasSize(1);
    assertThat(upstream.requests.get(0).body()).isEqualTo("hello");
  }
}
