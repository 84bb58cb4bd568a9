package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An HTTP/1.1 conformance battery (RFC 9112 sections 2-7, and the request-smuggling vectors of
 * the published lists) against a real gateway, with a raw-socket client and an upstream that
 * records what it received whole. Every test ends by comparing what reached the upstream with what
 * the limiter counted: a request that reaches the upstream uncounted fails it.
 */
class Http1ConformanceIntegrationTests {

  private RecordingUpstream upstream;
  private Fixtures.Harness h;

  /** {@code /strict/**}: one request a minute (case-insensitive); every request counted by {@code all}. */
  private static Policy policy() {
    return Policy.builder()
        .rule(Rule.builder("strict").limit(Limit.fixedWindow("strict", 1, Duration.ofMinutes(1)))
            .build())
        .rule(Rule.builder("all").limit(Limit.fixedWindow("all", 1_000_000, Duration.ofMinutes(1)))
            .build())
        .route(Route.builder("strict").path("/strict/**").caseInsensitive(true).rule("strict")
            .build())
        .global("all")
        .build();
  }

  @BeforeEach
  void start() throws IOException {
    upstream = new RecordingUpstream();
    h = new Fixtures.Harness(Fixtures.config(policy()), upstream.uri());
  }

  @AfterEach
  void stop() throws IOException {
    h.close();
    upstream.close();
  }

  /** The answer's status to {@code raw} sent on its own connection, and whether it closed. */
  private int send(String raw) throws IOException {
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send(raw);
      String r = c.readResponse();
      assertThat(r).as(raw).isNotNull();
      return RawHttp.status(r);
    }
  }

  /**
   * Nothing reached the upstream that the limiter did not count and allow (a counted request
   * whose body then broke never reaches it whole: fewer is right, more is the worst bug).
   */
  private void everyUpstreamRequestWasCounted() {
    long allowed = h.events.decisions.stream().filter(d -> d.equals("http:allowed")).count();
    assertThat((long) upstream.requests.size()).as("requests the upstream received whole")
        .isLessThanOrEqualTo(allowed);
  }

  @Test
  void smugglingVectors_areRefused_andNothingOfThemReachesTheUpstream() throws Exception {
    String post = "POST /open/a HTTP/1.1\r\nHost: x\r\n";
    List<String[]> vectors = List.of(
        // CL.TE and TE.CL: both framings.
        new String[] {post + "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
            "400"},
        new String[] {post + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n1\r\nG\r\n"
            + "0\r\n\r\n", "400"},
        // TE.TE obfuscations.
        new String[] {post + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", "501"},
        new String[] {post + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", "400"},
        new String[] {post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n0\r\n\r\n",
            "501"},
        new String[] {post + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", "501"},
        new String[] {post + "Transfer-Encoding:\u000bchunked\r\n\r\n0\r\n\r\n", "400"},
        new String[] {post + " Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400"},
        new String[] {post + "X: a\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400"},
        new String[] {"POST /open/a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400"},
        // Lengths.
        new String[] {post + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", "400"},
        new String[] {post + "Content-Length: 1\r\nContent-Length: 1\r\n\r\na", "400"},
        new String[] {post + "Content-Length: 1, 1\r\n\r\na", "400"},
        new String[] {post + "Content-Length: +1\r\n\r\na", "400"},
        new String[] {post + "Content-Length: 0x1\r\n\r\na", "400"},
        new String[] {post + "Content-Length: 99999999999999999999\r\n\r\na", "400"},
        // Field syntax: obs-fold, bare CR, NUL, a space before the colon, bare LF.
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x\r\nX-A: 1\r2\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x\r\nX-A: 1\u00002\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost : x\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\nHost: x\n\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x\r\n\n", "400"},
        // Request line.
        new String[] {"GET  /open/a HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1 \r\nHost: x\r\n\r\n", "400"},
        new String[] {"GET /open/a\r\nHost: x\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.2\r\nHost: x\r\n\r\n", "505"},
        new String[] {"G@T /open/a HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        // Host (RFC 9112 3.2): exactly one, one authority, matching an absolute target.
        new String[] {"GET /open/a HTTP/1.1\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x, y\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x y\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: user@x\r\n\r\n", "400"},
        new String[] {"GET http://y/open/a HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        // Forms: the asterisk for OPTIONS only; CONNECT is not served.
        new String[] {"GET * HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        new String[] {"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", "405"},
        new String[] {"GET /open/%zz HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        new String[] {"GET /open/a#f HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        new String[] {"GET /open/a HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", "417"});
    for (String[] v : vectors) {
      assertThat(send(v[0])).as(v[0]).isEqualTo(Integer.parseInt(v[1]));
    }
    assertThat(upstream.requests).as("what reached the upstream").isEmpty();
    assertThat(upstream.partial).hasValue(0);
    everyUpstreamRequestWasCounted();
  }

  /**
   * Issue 20, item 4: {@code 5\r\nhello\r\nzz\r\n...} was forwarded as a complete, truncated
   * request, and the upstream answered 200 to "hello". Chunk sizes and extensions are read
   * strictly; at the first error the client gets 400, and the upstream's connection closes
   * before its request is complete.
   */
  @Test
  void issue20_malformedChunkedBodies_are400_andTheUpstreamNeverGetsAWholeRequest()
      throws Exception {
    String head = "POST /open/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (String body : List.of("5\r\nhello\r\nzz\r\n\r\n", "5 \r\nhello\r\n0\r\n\r\n",
        "0x5\r\nhello\r\n0\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n",
        "fffffffffffffffff\r\nhello\r\n0\r\n\r\n", "5;a\nb\r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\n0\r\n\r\n", "5\r\nhelloXX\r\n0\r\n\r\n", "5\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n0\r\nX-T: a\nb\r\n\r\n")) {
      assertThat(send(head + body)).as(body).isEqualTo(400);
    }
    assertThat(upstream.requests).isEmpty();
    // A valid one, extensions and a trailer included, goes through whole.
    assertThat(send(head + "5;ext=\"v\"\r\nhello\r\n1\r\n!\r\n0\r\nX-T: 1\r\n\r\n"))
        .isEqualTo(200);
    assertThat(upstream.requests).hasSize(1);
    assertThat(upstream.requests.get(0).body()).isEqualTo("hello!");
    everyUpstreamRequestWasCounted();
  }

  /**
   * Issue 30, item 8: a trailer section of 10,000 fields was forwarded, and a request line sent
   * straight after the last chunk was taken for a trailer. A trailer section is held to a header
   * section's caps and syntax: both are 400, and the upstream never gets the request whole.
   */
  @Test
  void issue30_trailersOverTheCapsOrNotFields_are400() throws Exception {
    String head = "POST /open/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n0\r\n";
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 10_000; i++) {
      many.append("X-T").append(i).append(": 1\r\n");
    }
    StringBuilder big = new StringBuilder("X-Big: ");
    big.append("a".repeat(4000)).append("\r\n");
    for (String trailer : List.of(many + "\r\n", big.toString().repeat(5) + "\r\n",
        "GET /open/smuggled HTTP/1.1\r\nHost: x\r\n\r\n", "X-A: 1\r\n folded\r\n\r\n",
        ": no-name\r\n\r\n", "X A: 1\r\n\r\n", "no-colon\r\n\r\n")) {
      assertThat(send(head + trailer)).as(trailer.substring(0, Math.min(40, trailer.length())))
          .isEqualTo(400);
    }
    assertThat(upstream.requests).isEmpty();
    // 100 fields are a header section's cap: that many still go through.
    StringBuilder hundred = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      hundred.append("X-T").append(i).append(": 1\r\n");
    }
    assertThat(send(head + hundred + "\r\n")).isEqualTo(200);
    assertThat(upstream.requests).hasSize(1);
    everyUpstreamRequestWasCounted();
  }

  /**
   * Issue 20, item 2: absolute-form targets and other spellings walked around path routes. Every
   * spelling of {@code /strict/...} is counted by the strict route (one a minute): at most one of
   * them reaches the upstream, and only as its normalised path.
   */
  @Test
  void issue20_everySpellingOfAStrictPath_isCountedByItsRoute() throws Exception {
    List<String> targets = List.of("/strict/a", "http://x/strict/a", "HTTP://x/strict/a?q=1",
        "/strict;x=1/a", "/strict/a;jsessionid=1", "//strict//a", "/./strict/./a",
        "/x/../strict/a", "/x/%2e%2e/strict/a", "/%73trict/a", "/STRICT/a", "/Strict/A",
        "/strict/..;/strict/a");
    int refused = 0;
    for (String target : targets) {
      int status = send("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(status).as(target).isIn(200, 429);
      refused += status == 429 ? 1 : 0;
    }
    assertThat(refused).isEqualTo(targets.size() - 1);
    assertThat(upstream.lines()).containsExactly("GET /strict/a HTTP/1.1");
    // Encoded slashes and backslashes are refused, never matched differently from what is sent.
    for (String target : List.of("/strict%2Fa", "/strict%2fa", "/x\\..\\strict/a", "/strict%5Ca")) {
      assertThat(send("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")).as(target)
          .isEqualTo(400);
    }
    assertThat(upstream.requests).hasSize(1);
    everyUpstreamRequestWasCounted();
  }

  /** The issue's numbers: 20 absolute-form requests of the default policy: 15 then 429. */
  @Test
  void issue20_absoluteForm_underTheDefaultPolicy_is15Then429() throws Exception {
    h.close();
    h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()), upstream.uri());
    List<Integer> statuses = new ArrayList<>();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      for (int i = 0; i < 20; i++) {
        c.send("GET http://x/api/analysis/x HTTP/1.1\r\nHost: x\r\n\r\n");
        statuses.add(RawHttp.status(c.readResponse()));
      }
    }
    assertThat(statuses.subList(0, 15)).containsOnly(200);
    assertThat(statuses.subList(15, 20)).containsOnly(429);
    assertThat(upstream.lines()).hasSize(15).containsOnly("GET /api/analysis/x HTTP/1.1");
  }

  @Test
  void optionsAsterisk_andHttp10WithoutHost_areForwarded() throws Exception {
    assertThat(send("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")).isEqualTo(200);
    assertThat(send("GET /open/10 HTTP/1.0\r\n\r\n")).isEqualTo(200);
    assertThat(upstream.lines()).containsExactly("OPTIONS * HTTP/1.1", "GET /open/10 HTTP/1.0");
    everyUpstreamRequestWasCounted();
  }

  /**
   * Issue 20, item 6: 34 or more pipelined requests in one write closed the connection with no
   * response at all. Every one is answered, in order, bodies and refusals among them.
   */
  @Test
  void issue20_pipelinedRequests_inOneWrite_allAnsweredInOrder() throws Exception {
    StringBuilder all = new StringBuilder();
    int n = 60;
    for (int i = 0; i < n; i++) {
      if (i == 7) {
        all.append("GET /strict/a HTTP/1.1\r\nHost: x\r\n\r\n");
      } else if (i == 8) {
        all.append("POST /strict/b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde");
      } else if (i % 5 == 0) {
        all.append("POST /open/").append(i).append(" HTTP/1.1\r\nHost: x\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
      } else {
        all.append("GET /open/").append(i).append(" HTTP/1.1\r\nHost: x\r\n\r\n");
      }
    }
    List<Integer> statuses = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send(all.toString());
      for (int i = 0; i < n; i++) {
        String r = c.readResponse();
        assertThat(r).as("response %d", i).isNotNull();
        statuses.add(RawHttp.status(r));
        int at = r.indexOf("X-Seen: ");
        seen.add(at < 0 ? "-" : r.substring(at + 8, r.indexOf('\r', at)));
      }
    }
    assertThat(statuses.get(7)).isEqualTo(200);
    assertThat(statuses.get(8)).isEqualTo(429);
    assertThat(statuses.stream().filter(s -> s == 200)).hasSize(n - 1);
    assertThat(upstream.requests).hasSize(n - 1);
    // In order: the upstream numbers its answers, and they arrive 1, 2, 3...
    List<String> expected = new ArrayList<>();
    for (int i = 1; i < n; i++) {
      expected.add(Integer.toString(i));
    }
    assertThat(seen.stream().filter(s -> !s.equals("-")).toList()).isEqualTo(expected);
    everyUpstreamRequestWasCounted();
  }

  /** A refused request that expects 100-continue gets its 429 and the connection closes. */
  @Test
  void refusedExpectContinue_is429_andCloses() throws Exception {
    assertThat(send("GET /strict/a HTTP/1.1\r\nHost: x\r\n\r\n")).isEqualTo(200);
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("POST /strict/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
          + "Expect: 100-continue\r\n\r\n");
      String r = c.readResponse();
      assertThat(RawHttp.status(r)).isEqualTo(429);
      assertThat(r).containsIgnoringCase("connection: close");
      c.send("abcGET /open/x HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(c.closedByServer()).isTrue();
    }
    assertThat(upstream.requests).hasSize(1);
    everyUpstreamRequestWasCounted();
  }

  /** A client that shuts its output after its request still reads the answer. */
  @Test
  void halfClosedClient_getsItsAnswer() throws Exception {
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /open/half HTTP/1.1\r\nHost: x\r\n\r\n");
      c.socket.shutdownOutput();
      String r = c.readResponse();
      assertThat(RawHttp.status(r)).isEqualTo(200);
      assertThat(c.closedByServer()).isTrue();
    }
    assertThat(upstream.lines()).containsExactly("GET /open/half HTTP/1.1");
    everyUpstreamRequestWasCounted();
  }

  /** Over the caps: 414 and 431, and the connection closes; a client that goes on is not read. */
  @Test
  void oversizedLineAndHeaders_are414And431() throws Exception {
    assertThat(send("GET /open/" + "a".repeat(9000) + " HTTP/1.1\r\nHost: x\r\n\r\n"))
        .isEqualTo(414);
    StringBuilder big = new StringBuilder("GET /open/a HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 400; i++) {
      big.append("X-").append(i).append(": ").append("v".repeat(40)).append("\r\n");
    }
    assertThat(send(big + "\r\n")).isEqualTo(431);
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("GET /open/" + "a".repeat(20_000));
      assertThat(RawHttp.status(c.readResponse())).isEqualTo(414);
      c.send("more bytes that nobody reads");
      assertThat(c.closedByServer()).isTrue();
    }
    assertThat(upstream.requests).isEmpty();
  }
}
