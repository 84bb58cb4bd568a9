package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30's attacks on rules counted on responses, played as an attacker would, against a raw
 * app that takes 300 ms to check a guess and records what reached it: guesses sent at once (30
 * connections, 30 HTTP/2 streams, 4 connections of 100 streams), guesses whose client hangs up
 * before the answer (a reset connection, a reset stream), and an attacker whose own valid code
 * answers 200 between wrong ones. What reached the app is the measure: never more than the limit.
 */
class ParallelAttackIntegrationTests {

  private static final String POLICY = """
      version: 1
      rules:
        invite:codes:
          countStatus: [404]
          limits:
            - {type: cooldown, maxRetries: 3, retryWindow: 5m, cooldown: 1m, maxCooldown: 1h}
        sign-in:failed:
          countStatus: [401]
          limits: [{type: sliding-window, limit: 3, window: 15m}]
          ban: 15m
        backstop:
          limits: [{type: token-bucket, burst: 100000, refill: 100000, period: 1s}]
      routes:
        - {name: invites, paths: [/api/invites/**], rules: [invite:codes]}
        - {name: sign-in, paths: [/sign-in/**], rules: [sign-in:failed]}
        - {name: rest, paths: ["/**"], rules: [backstop]}
      """;

  @TempDir
  Path dir;

  private GuessingApp app;
  private Fixtures.Harness h;
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stop() throws Exception {
    pool.shutdownNow();
    if (h != null) {
      h.close();
    }
    if (app != null) {
      app.close();
    }
  }

  private void start() throws Exception {
    app = new GuessingApp(300);
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, POLICY);
    PolicyConfig c = PolicyLoader.load(file, Map.of()).config();
    h = new Fixtures.Harness(c, app.uri());
  }

  /** Runs {@code n} tasks released at once; returns their results. */
  private <T> List<T> atOnce(int n, Callable<T> task) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<T>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(pool.submit(() -> {
        go.await();
        return task.call();
      }));
    }
    go.countDown();
    List<T> out = new ArrayList<>();
    for (Future<T> f : all) {
      out.add(f.get(30, TimeUnit.SECONDS));
    }
    return out;
  }

  private String statusOf(String request) throws IOException {
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send(request);
      String r = c.readResponse();
      return r == null ? "EOF" : r.substring(9, 12);
    }
  }

  @Test
  void cooldown_thirtyGuessesOnThirtyConnections_threeReachTheApp() throws Exception {
    start();
    List<String> answers = atOnce(30, () ->
        statusOf("GET /api/invites/wrong-" + Thread.currentThread().getId()
            + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    assertThat(app.count("/api/invites/wrong")).isEqualTo(3);
    assertThat(answers).filteredOn("404"::equals).hasSize(3);
    assertThat(answers).filteredOn("429"::equals).hasSize(27);
    // The three failures locked the key: the right code is refused for the lock's minute.
    assertThat(statusOf("GET /api/invites/right HTTP/1.1\r\nHost: x\r\n\r\n")).isEqualTo("429");
    assertThat(app.count("/api/invites/right")).isZero();
  }

  @Test
  void countStatus_thirtyWrongPasswordsAtOnce_threeReachTheApp_thenTheBan() throws Exception {
    start();
    List<String> answers = atOnce(30, () ->
        statusOf("POST /sign-in/password HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"));
    assertThat(app.count("/sign-in/password")).isEqualTo(3);
    assertThat(answers).filteredOn("401"::equals).hasSize(3);
    String next;
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      c.send("POST /sign-in/ok HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
      next = c.readResponse();
    }
    assertThat(next).startsWith("HTTP/1.1 429").contains("Retry-After: 900");
    assertThat(app.count("/sign-in/ok")).isZero();
  }

  @Test
  void cooldown_thirtyGuessesAsStreamsOfOneHttp2Connection_threeReachTheApp() throws Exception {
    start();
    List<String> statuses = streams(30);
    assertThat(app.count("/api/invites/wrong")).isEqualTo(3);
    assertThat(statuses).filteredOn("404"::equals).hasSize(3);
    assertThat(statuses).filteredOn("429"::equals).hasSize(27);
  }

  @Test
  void cooldown_fourConnectionsOfAHundredStreams_threeReachTheApp() throws Exception {
    start();
    List<List<String>> all = atOnce(4, () -> streams(100));
    assertThat(app.count("/api/invites/wrong")).isEqualTo(3);
    assertThat(all.stream().flatMap(List::stream).filter("404"::equals)).hasSize(3);
  }

  /** {@code n} wrong guesses as streams of one h2c connection; each stream's {@code :status}. */
  private List<String> streams(int n) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), h.gateway.port())) {
      s.setSoTimeout(30_000);
      H2Frames f = new H2Frames().preface();
      for (int i = 0; i < n; i++) {
        f.get(1 + 2 * i, "GET", "/api/invites/wrong-h2-" + i);
      }
      OutputStream out = s.getOutputStream();
      out.write(f.take());
      out.flush();
      return statusesOf(s.getInputStream(), n);
    }
  }

  /** Reads HEADERS frames until {@code n} streams have a {@code :status}. */
  private static List<String> statusesOf(InputStream in, int n) throws IOException {
    io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder hpack =
        new io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder(false);
    List<String> out = new ArrayList<>();
    while (out.size() < n) {
      byte[] head = in.readNBytes(9);
      if (head.length < 9) {
        break;
      }
      int len = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
      int type = head[3] & 0xff;
      int id = ((head[5] & 0x7f) << 24) | ((head[6] & 0xff) << 16) | ((head[7] & 0xff) << 8)
          | (head[8] & 0xff);
      byte[] payload = in.readNBytes(len);
      if (type == H2Frames.HEADERS && id > 0) {
        try {
          out.add(String.valueOf(hpack.decodeHeaders(id,
              io.netty.buffer.Unpooled.wrappedBuffer(payload)).status()));
        } catch (Exception e) {
          throw new IOException(e);
        }
      } else if (type == H2Frames.RST_STREAM) {
        out.add("RST_STREAM");
      } else if (type == H2Frames.GOAWAY) {
        break;
      }
    }
    return out;
  }

  /**
   * A client that resets its connection after sending, before the app's answer: the gateway
   * reads on and settles by the app's 404, so ten such guesses get three to the app and the
   * lock, not ten (and not unlimited ones, each aborted at 150 ms).
   */
  @Test
  void guessesAbortedBeforeTheAnswer_areSettledByTheAppsAnswer() throws Exception {
    start();
    for (int i = 0; i < 10; i++) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), h.gateway.port())) {
        s.getOutputStream().write(("GET /api/invites/wrong-abort-" + i
            + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        Thread.sleep(150);
        s.setSoLinger(true, 0);   // close with RST: the abort
      }
    }
    // The guesses in flight settle when the app answers, 300 ms after each arrived.
    String locked = eventually(() -> statusOf("GET /api/invites/right HTTP/1.1\r\nHost: x"
        + "\r\n\r\n"), "429");
    assertThat(locked).isEqualTo("429");
    assertThat(app.count("/api/invites/wrong-abort")).isEqualTo(3);
    assertThat(app.count("/api/invites/right")).isZero();
  }

  /**
   * The other side of the same rule: a phone that drops off the WiFi after sending a right code
   * is judged by the app's 200, not counted as a failure.
   */
  @Test
  void rightCodesWhoseClientWentAway_countNothing() throws Exception {
    start();
    for (int i = 0; i < 3; i++) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), h.gateway.port())) {
        s.getOutputStream().write(("GET /api/invites/right-" + i + " HTTP/1.1\r\nHost: x\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        String path = "/api/invites/right-" + i;
        eventually(() -> String.valueOf(app.count(path)), "1");   // with the app: hang up
        s.setSoLinger(true, 0);
      }
    }
    Thread.sleep(600);   // the app answers each 300 ms after it arrived
    assertThat(app.count("/api/invites/right")).isEqualTo(3);
    assertThat(statusOf("GET /api/invites/wrong-later HTTP/1.1\r\nHost: x\r\n\r\n"))
        .isEqualTo("404");
  }

  /** The same with HTTP/2: each guess's stream is reset after it is sent. */
  @Test
  void http2StreamsResetBeforeTheAnswer_countAsFailures() throws Exception {
    start();
    for (int i = 0; i < 10; i++) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), h.gateway.port())) {
        H2Frames f = new H2Frames().preface().get(1, "GET", "/api/invites/wrong-rst-" + i);
        OutputStream out = s.getOutputStream();
        out.write(f.take());
        out.flush();
        Thread.sleep(100);
        out.write(f.reset(1).take());
        out.flush();
        Thread.sleep(50);
      }
    }
    String locked = eventually(() -> statusOf("GET /api/invites/right HTTP/1.1\r\nHost: x"
        + "\r\n\r\n"), "429");
    assertThat(locked).isEqualTo("429");
    assertThat(app.count("/api/invites/wrong-rst")).isLessThanOrEqualTo(3);
    assertThat(app.count("/api/invites/right")).isZero();
  }

  /**
   * HTTP/2's dropped phone: each right code's stream is reset while the app holds it; the
   * gateway reads on and settles by the app's 200, so none counts as a failure (three would
   * lock the address).
   */
  @Test
  void http2RightCodesResetWhileWithTheApp_countNothing() throws Exception {
    start();
    for (int i = 0; i < 3; i++) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), h.gateway.port())) {
        String path = "/api/invites/right-h2-" + i;
        H2Frames f = new H2Frames().preface().get(1, "GET", path);
        OutputStream out = s.getOutputStream();
        out.write(f.take());
        out.flush();
        eventually(() -> String.valueOf(app.count(path)), "1");   // with the app: reset
        out.write(f.reset(1).take());
        out.flush();
      }
    }
    Thread.sleep(600);   // the app answers each 300 ms after it arrived
    assertThat(app.count("/api/invites/right-h2")).isEqualTo(3);
    assertThat(statusOf("GET /api/invites/wrong-later HTTP/1.1\r\nHost: x\r\n\r\n"))
        .isEqualTo("404");
  }

  /**
   * An address-wide cooldown and an attacker with one valid code of their own: 2 wrong, 1 right,
   * repeated. The right code's 200 does not reset the address's failures: 3 wrong guesses reach
   * the app, then the lock.
   */
  @Test
  void ownValidCode_doesNotLaunderAnAddressCooldown() throws Exception {
    start();
    List<String> seen = new CopyOnWriteArrayList<>();
    for (int round = 0; round < 7; round++) {
      for (String code : new String[] {"wrong-a", "wrong-b", "right"}) {
        seen.add(statusOf("GET /api/invites/" + code + "-" + round
            + " HTTP/1.1\r\nHost: x\r\n\r\n"));
      }
    }
    assertThat(app.count("/api/invites/wrong")).isEqualTo(3);
    assertThat(seen).endsWith("429", "429", "429");
  }

  private static String eventually(Callable<String> probe, String wanted) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    String got;
    do {
      got = probe.call();
      if (got.equals(wanted)) {
        return got;
      }
      Thread.sleep(50);
    } while (System.nanoTime() < deadline);
    return got;
  }
}
