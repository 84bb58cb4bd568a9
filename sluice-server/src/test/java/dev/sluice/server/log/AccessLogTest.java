package dev.sluice.server.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.AccessEntry;
import dev.sluice.policy.LoggingSettings;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AccessLogTest {

  static final LoggingSettings COMMON = new LoggingSettings(LoggingSettings.Access.COMMON, null);
  static final long T = Instant.parse("2025-06-01T12:00:00.123Z").toEpochMilli();

  static AccessEntry entry(String path, String outcome, long upstreamMicros) {
    return new AccessEntry(T, "203.0.113.7", "GET", path, 429, 52, "api", "api", outcome,
        upstreamMicros, COMMON);
  }

  @Test
  void common_isClfThenSluicesFields_withClientTextEscaped() {
    assertThat(AccessLog.common(entry("/api/x", "refused", -1))).isEqualTo(
        "203.0.113.7 - - [01/Jun/2025:12:00:00 +0000] \"GET /api/x HTTP/1.1\" 429 52 route=api "
            + "rule=api outcome=refused upstream_ms=-");
    assertThat(AccessLog.common(entry("/a\"b\\c\n", "allowed", 1500)))
        .contains("\"GET /a\\x22b\\x5cc\\x0a HTTP/1.1\"").endsWith("upstream_ms=1.500");
  }

  /** Issue 20 item 13: combined is common plus referer and user agent, where parsers look. */
  @Test
  void combined_isCommonThenRefererAndUserAgent_thenSluicesFields() {
    AccessEntry e = new AccessEntry(T, "203.0.113.7", "GET", "/api/x", 200, 5, "api", "api",
        "allowed", -1, COMMON, T * 1000 + 456, "HTTP/2.0", null, "curl/8.5 \"x\"",
        "10.0.0.1", "example.com", null, false);
    assertThat(AccessLog.combined(e)).isEqualTo("203.0.113.7 - - [01/Jun/2025:12:00:00 +0000] "
        + "\"GET /api/x HTTP/2.0\" 200 5 \"-\" \"curl/8.5 \\x22x\\x22\" route=api rule=api "
        + "outcome=allowed upstream_ms=-");
  }

  @Test
  void json_carriesWhatReplayNeeds_startPeerHeadersAndForwarding() {
    AccessEntry e = new AccessEntry(T, "198.51.100.9", "GET", "/a", 101, 0, "ws", "connect",
        "allowed", -1, COMMON, T * 1000 + 456, "HTTP/1.1", "https://r/", "ua", "10.0.0.1",
        "example.com", new AccessEntry.Forwarding("198.51.100.9, 10.0.0.1", null, null), true);
    assertThat(AccessLog.json(e)).endsWith("\"upstream_ms\":null,"
        + "\"start\":\"2025-06-01T12:00:00.123456Z\",\"protocol\":\"HTTP/1.1\","
        + "\"peer\":\"10.0.0.1\",\"host\":\"example.com\",\"referer\":\"https://r/\","
        + "\"user_agent\":\"ua\",\"websocket\":true,"
        + "\"x_forwarded_for\":\"198.51.100.9, 10.0.0.1\"}");
  }

  @Test
  void json_escapesValues_andMasksPasswords() {
    AccessEntry e = new AccessEntry(T, "::1", "GET", "/go?to=redis://u:s3cret@h/\"x\"", 200, 0,
        null, null, "allowed", 2000, COMMON);
    assertThat(AccessLog.json(e)).isEqualTo("{\"ts\":\"2025-06-01T12:00:00.123Z\",\"client\":\"::1\","
        + "\"method\":\"GET\",\"path\":\"/go?to=redis://u:s3cret@h/\\\"x\\\"\",\"status\":200,"
        + "\"bytes\":0,\"route\":null,\"rule\":null,\"outcome\":\"allowed\",\"upstream_ms\":2.000}");
  }

  /** A writer stuck on a slow disk: offers never wait; what does not fit is dropped and counted. */
  @Test
  void stuckWriter_neverBlocksTheCaller_dropsAndCounts() throws Exception {
    CountDownLatch writing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PrintStream stuck = new PrintStream(new OutputStream() {
      @Override
      public void write(int b) {
        writing.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    AccessLog log = new AccessLog(stuck, 2);
    try {
      log.accept(entry("/1", "allowed", -1));
      assertThat(writing.await(10, TimeUnit.SECONDS)).isTrue();
      // The writer holds /1; the queue takes two more; the rest are dropped at once.
      for (int i = 2; i <= 6; i++) {
        log.accept(entry("/" + i, "allowed", -1));
      }
      assertThat(log.dropped()).isEqualTo(3);
    } finally {
      release.countDown();
      log.close();
    }
  }
}
