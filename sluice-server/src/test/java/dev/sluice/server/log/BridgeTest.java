package dev.sluice.server.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.Log;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Third-party loggers (SLF4J, java.util.logging, System.Logger) write through the server's Log. */
class BridgeTest {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private Log previous;

  @BeforeEach
  void install() {
    previous = Log.process();
    Logging.setUp(new Log(new PrintStream(bytes, true, StandardCharsets.UTF_8), Log.Level.INFO,
        Log.Format.TEXT));
  }

  @AfterEach
  void restore() {
    Logging.setUp(previous);
  }

  List<String> lines() {
    return bytes.toString(StandardCharsets.UTF_8).lines().toList();
  }

  @Test
  void slf4j_julAndSystemLogger_shareOneFormat_andOneLevelVocabulary() {
    LoggerFactory.getLogger("io.lettuce.core.Test").warn("cannot reach {} ({} tries)",
        "redis://app:s3cret@10.0.0.7:6379", 3);
    java.util.logging.Logger.getLogger("io.grpc.Test").warning("grpc says {0}");
    System.getLogger("dev.sluice.redis.Test").log(System.Logger.Level.ERROR, "store failed");
    LoggerFactory.getLogger("io.netty.Test").debug("below the level");
    java.util.logging.Logger.getLogger("io.grpc.Test").fine("below the level");
    assertThat(lines()).hasSize(3);
    assertThat(lines().get(0)).endsWith(" WARN  cannot reach redis://app:***@10.0.0.7:6379 "
        + "(3 tries) logger=io.lettuce.core.Test");
    assertThat(lines().get(1)).endsWith(" WARN  grpc says {0} logger=io.grpc.Test");
    assertThat(lines().get(2)).endsWith(" ERROR store failed logger=dev.sluice.redis.Test");
    assertThat(bytes.toString(StandardCharsets.UTF_8)).doesNotContain("s3cret")
        .doesNotContain("WARNING").doesNotContain("SEVERE");
  }

  @Test
  void quietedLogger_showsOnlyItsFloor_andAnExceptionFollowsIndented() {
    Logging.quiet("io.lettuce.core.protocol.BridgeTestWatchdog", Log.Level.ERROR);
    org.slf4j.Logger watchdog = LoggerFactory.getLogger("io.lettuce.core.protocol.BridgeTestWatchdog");
    watchdog.warn("Cannot reconnect");
    watchdog.error("gave up", new IllegalStateException("closed", new RuntimeException("root")));
    List<String> lines = lines();
    assertThat(lines.get(0)).endsWith(" ERROR gave up logger=io.lettuce.core.protocol."
        + "BridgeTestWatchdog error=\"java.lang.IllegalStateException: closed\"");
    assertThat(lines.subList(1, lines.size())).allMatch(l -> l.startsWith("\t"))
        .anyMatch(l -> l.equals("\tCaused by: java.lang.RuntimeException: root"));
  }
}
