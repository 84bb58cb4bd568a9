package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LogTest {

  @Test
  void throwableField_isShownOnTheLine_andItsTraceFollowsIndented() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Log log = new Log(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    log.error("rate limit decision failed", "rules", "payments",
        "error", new IllegalStateException("bug"));
    String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\\R");
    assertThat(lines[0]).endsWith(" ERROR rate limit decision failed rules=payments "
        + "error=\"java.lang.IllegalStateException: bug\"");
    assertThat(lines[1]).startsWith("\tat dev.sluice.server.LogTest.");
  }

  @Test
  void json_isOneObjectALine_withEscapedValues_andNoPassword() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Log log = new Log(new PrintStream(bytes, true, StandardCharsets.UTF_8), Log.Level.INFO,
        Log.Format.JSON, java.time.Clock.fixed(java.time.Instant.parse("2026-01-02T03:04:05.678Z"),
            java.time.ZoneOffset.UTC));
    log.warn("store \"down\"\n", "store", "redis://:s3cret@h:1", "attempts", 3, "ratio", 0.5,
        "key", "a\tb");
    assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo("{\"ts\":\"2026-01-02T03:04:05.678Z\","
        + "\"level\":\"WARN\",\"msg\":\"store \\\"down\\\"\\n\",\"store\":\"redis://:***@h:1\","
        + "\"attempts\":3,\"ratio\":0.5,\"key\":\"a\\tb\"}\n");
  }

  @Test
  void levelFilter_dropsLinesBelowIt_andTextMasksPasswords() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Log log = new Log(new PrintStream(bytes, true, StandardCharsets.UTF_8), Log.Level.WARN,
        Log.Format.TEXT);
    log.info("hidden");
    log.debug("hidden");
    log.error("cannot start: store redis://u:s3cret@h:1 refused", "uri", "rediss://s3cret@h");
    assertThat(bytes.toString(StandardCharsets.UTF_8)).doesNotContain("hidden")
        .doesNotContain("s3cret")
        .endsWith(" ERROR cannot start: store redis://u:***@h:1 refused uri=rediss://***@h\n");
    assertThat(Log.Level.parse("Debug")).isEqualTo(Log.Level.DEBUG);
  }
}
