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
}
