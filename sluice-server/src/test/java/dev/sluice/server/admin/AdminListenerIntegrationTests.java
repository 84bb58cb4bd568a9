package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.server.Closer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin listener against clients that stall, on real sockets: slowloris heads, stalled
 * bodies, idle keep-alive connections, more connections than the cap, deep pipelining, oversized
 * heads. The listener's timeouts read a clock the test moves ({@link #nanos}); the sweep that
 * looks at them is called by the test, so nothing waits for time to pass.
 */
class AdminListenerIntegrationTests {

  final AtomicLong nanos = new AtomicLong(-1_000_000_000_000L);
  final Metrics metrics = new Metrics((level, message, fields) -> {});
  final StoreHealth store = StoreHealth.memory();
  final Closer open = new Closer();
  AdminServer admin;

  @AfterEach
  void stop() throws Exception {
    open.close();
    if (admin != null) {
      admin.close();
    }
  }

  void start(AdminOptions options) throws Exception {
    LoadedPolicy policy = PolicyLoader.loadDefault(Map.of());
    admin = AdminServer.builder(metrics, () -> policy, () -> Instant.EPOCH, "test", store)
        .options(options).nanos(nanos::get).start(new InetSocketAddress("127.0.0.1", 0));
    store.listening();
  }

  Socket connect() throws IOException {
    return open.add(new Socket("127.0.0.1", admin.port()));
  }

  /** Half a head, as a slowloris sends it: the last blank line never comes. */
  Socket stalledHead() throws IOException {
    Socket s = connect();
    s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** A whole exchange on a connection of its own: the status line. */
  String probe(String path) throws IOException {
    try (Socket s = new Socket("127.0.0.1", admin.port())) {
      s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      return statusLine(s.getInputStream());
    }
  }

  static String statusLine(InputStream in) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (int c = in.read(); c >= 0 && c != '\r'; c = in.read()) {
      sb.append((char) c);
    }
    return sb.toString();
  }

  /** Reads one whole answer with a Content-Length from {@code in}: its head and body. */
  static String answer(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int c = in.read();
      if (c < 0) {
        return head.toString(StandardCharsets.US_ASCII);
      }
      head.write(c);
      matched = c == "\r\n\r\n".charAt(matched) ? matched + 1 : c == '\r' ? 1 : 0;
    }
    String h = head.toString(StandardCharsets.US_ASCII);
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)")
        .matcher(h);
    int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
    return h + new String(in.readNBytes(length), StandardCharsets.US_ASCII);
  }

  /**
   * True when the server has closed {@code s}: a read ends (EOF or reset) at once. A read that
   * finds the connection open waits for bytes that never come; after 10 s it fails the test
   * instead of hanging it.
   */
  static boolean closedByServer(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    try {
      return s.getInputStream().read() < 0;
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true;   // a reset: closed with bytes it never read
    }
  }

  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  /** Waits until the listener has accepted {@code n} connections (accepting is asynchronous). */
  void awaitConnections(int n) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (admin.connections() != n) {
      assertThat(System.nanoTime()).as(n + " connections open; now " + admin.connections())
          .isLessThan(end);
      Thread.sleep(5);   // polling an eventual condition with a deadline, not timing
    }
  }

  @Test
  void slowloris_twoStalledHeads_probesMetricsAndPolicyStillAnswer() throws Exception {
    start(AdminOptions.DEFAULTS);
    stalledHead();
    stalledHead();
    awaitConnections(2);
    assertThat(probe("/healthz")).isEqualTo("HTTP/1.1 200 OK");
    assertThat(probe("/readyz")).isEqualTo("HTTP/1.1 200 OK");
    assertThat(probe("/metrics")).isEqualTo("HTTP/1.1 200 OK");
    assertThat(probe("/v1/policy")).as("the API too: its workers wait on no client")
        .isEqualTo("HTTP/1.1 200 OK");
  }

  @Test
  void headTimeout_closesAStalledHead_notBefore() throws Exception {
    start(AdminOptions.DEFAULTS.withHeadTimeout(Duration.ofSeconds(5)));
    Socket slow = stalledHead();
    awaitConnections(1);
    advance(Duration.ofMillis(4_999));
    admin.sweep();
    assertThat(admin.connections()).as("4.999 s into a 5 s head timeout").isEqualTo(1);
    advance(Duration.ofMillis(1));
    admin.sweep();
    assertThat(admin.connections()).isZero();
    assertThat(closedByServer(slow)).isTrue();
    assertThat(metrics.adminClosedCount("head-timeout")).isEqualTo(1);
  }

  @Test
  void headTimeout_runsFromTheConnectionsStart_evenWithoutAByte() throws Exception {
    start(AdminOptions.DEFAULTS);
    Socket silent = connect();
    awaitConnections(1);
    advance(Duration.ofSeconds(10));
    admin.sweep();
    assertThat(closedByServer(silent)).isTrue();
    assertThat(metrics.adminClosedCount("head-timeout")).isEqualTo(1);
  }

  @Test
  void bodyTimeout_closesAStalledBody() throws Exception {
    start(AdminOptions.DEFAULTS.withBodyTimeout(Duration.ofSeconds(3)));
    Socket s = connect();
    s.getOutputStream().write(("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Length: 100\r\n\r\n{\"domain\":").getBytes(StandardCharsets.US_ASCII));
    awaitTimer("body-timeout");
    advance(Duration.ofSeconds(2));
    admin.sweep();
    assertThat(admin.connections()).isEqualTo(1);
    advance(Duration.ofSeconds(1));
    admin.sweep();
    assertThat(closedByServer(s)).isTrue();
    assertThat(metrics.adminClosedCount("body-timeout")).isEqualTo(1);
  }

  @Test
  void keepAlive_waitsTheIdleTimeout_butANextHeadBegunGetsTheHeadTimeout() throws Exception {
    start(AdminOptions.DEFAULTS);
    Socket s = connect();
    s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    assertThat(answer(s.getInputStream())).startsWith("HTTP/1.1 200 OK")
        .endsWith("{\"status\":\"ok\"}\n");
    advance(Duration.ofSeconds(59));
    admin.sweep();
    assertThat(admin.connections()).as("idle 59 s of 60").isEqualTo(1);

    s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHo".getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    awaitTimer("head-timeout");
    advance(Duration.ofSeconds(9));
    admin.sweep();
    assertThat(admin.connections()).isEqualTo(1);
    advance(Duration.ofSeconds(1));
    admin.sweep();
    assertThat(closedByServer(s)).isTrue();
    assertThat(metrics.adminClosedCount("head-timeout")).isEqualTo(1);
    assertThat(metrics.adminClosedCount("idle-timeout")).isZero();
  }

  /** Waits until a connection's timer is {@code reason}: the listener has seen its bytes. */
  void awaitTimer(String reason) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!admin.onLoop(() -> admin.connections.all().stream()
        .anyMatch(c -> c.timeoutReason().equals(reason)))) {
      assertThat(System.nanoTime()).as("a connection on its " + reason).isLessThan(end);
      Thread.sleep(5);   // polling an eventual condition with a deadline, not timing
    }
  }

  @Test
  void pastTheCap_theLongestWaitingIsClosed_andProbesAreNeverKeptOut() throws Exception {
    start(AdminOptions.DEFAULTS.withMaxConnections(8));
    List<Socket> stalled = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      stalled.add(stalledHead());
      if (i % 10 == 9) {
        assertThat(probe("/healthz")).as("a probe after " + (i + 1) + " stalled heads")
            .isEqualTo("HTTP/1.1 200 OK");
        assertThat(probe("/readyz")).isEqualTo("HTTP/1.1 200 OK");
      }
    }
    assertThat(admin.connections()).isLessThanOrEqualTo(8);
    assertThat(closedByServer(stalled.get(0))).as("the oldest gave way").isTrue();
    assertThat(closedByServer(stalled.get(50))).isTrue();
    // 100 stalled and 20 probes came; the probes went by themselves, 8 stalled stay
    assertThat(metrics.adminClosedCount("cap")).isGreaterThanOrEqualTo(92);
    assertThat(metrics.adminClosedCount("full")).isZero();
  }

  @Test
  void deepPipelining_behindASlowAnswer_isCutPastEightQueuedRequests() throws Exception {
    start(AdminOptions.DEFAULTS);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    admin.handle("/v1/slow", call -> {
      release.await();
      return AdminAnswer.json(200, "{}");
    });
    try {
      Socket s = connect();
      s.getOutputStream().write("GET /v1/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(50)
          .getBytes(StandardCharsets.US_ASCII));
      assertThat(closedByServer(s)).as("one answering, eight waiting, the tenth too many")
          .isTrue();
    } finally {
      release.countDown();
    }
    Socket fine = connect();
    fine.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(9)
        .getBytes(StandardCharsets.US_ASCII));
    for (int i = 0; i < 9; i++) {
      assertThat(answer(fine.getInputStream())).as("answer " + i).startsWith("HTTP/1.1 200 OK");
    }
  }

  @Test
  void aHeadPastItsCap_is431_andTheConnectionCloses() throws Exception {
    start(AdminOptions.DEFAULTS);
    Socket s = connect();
    s.getOutputStream().write(("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
        + "a".repeat(20_000) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    assertThat(answer(s.getInputStream())).startsWith("HTTP/1.1 431 ")
        .contains("the header section may be at most 16384 bytes");
    assertThat(closedByServer(s)).isTrue();
    assertThat(metrics.adminRefusedCount("malformed")).isEqualTo(1);
  }

  @Test
  void aBodyPastItsCap_is413() throws Exception {
    start(AdminOptions.DEFAULTS);
    Socket s = connect();
    s.getOutputStream().write(("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
        + (AdminServer.MAX_BODY + 1) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    assertThat(statusLine(s.getInputStream())).isEqualTo("HTTP/1.1 413 Request Entity Too Large");
  }
}
