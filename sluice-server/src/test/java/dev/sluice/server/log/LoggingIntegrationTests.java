package dev.sluice.server.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: the shipped jar logs every line (its own, Netty's, Lettuce's) in one format and one
 * level vocabulary, says nothing about SLF4J's set-up, and never prints a password. A child JVM
 * on {@code target/sluice.jar}, the jar operators run, with its stderr read whole.
 */
class LoggingIntegrationTests {

  private static final Path JAR = Path.of("target", "sluice.jar");

  @TempDir
  Path dir;

  record Exit(int code, List<String> err) {}

  /**
   * Runs the jar until it exits, or until each text of {@code until} has shown on a line (then
   * stops it as an operator would, with SIGTERM); returns the exit code and every stderr line.
   */
  static Exit run(List<String> until, String... args) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-jar", JAR.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
    List<String> lines = new CopyOnWriteArrayList<>();
    CountDownLatch seen = new CountDownLatch(until.size());
    List<String> waiting = new CopyOnWriteArrayList<>(until);
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          lines.add(line);
          for (String text : waiting) {
            if (line.contains(text) && waiting.remove(text)) {
              seen.countDown();
            }
          }
        }
      } catch (IOException e) {
        // the process ended
      }
    }, "sluice-child-stderr");
    reader.start();
    try {
      if (!until.isEmpty()) {
        assertThat(seen.await(60, TimeUnit.SECONDS)).as("lines with " + until + " in " + lines)
            .isTrue();
        p.destroy();
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("exited").isTrue();
      reader.join(TimeUnit.SECONDS.toMillis(10));
    } finally {
      p.destroyForcibly();
    }
    return new Exit(p.exitValue(), List.copyOf(lines));
  }

  @Test
  void check_printsTheVerdictOnly_withoutSlf4jWarnings() throws Exception {
    Exit e = run(List.of(), "check");
    assertThat(e.code()).isZero();
    assertThat(e.err()).containsExactly(
        "<embedded default>: valid (5 rules, 6 routes, global [backstop])");
  }

  /**
   * A Redis that does not answer, at debug: Netty's and Lettuce's lines come through SLF4J,
   * the Redis store's through System.Logger (java.util.logging); none says WARNING or SEVERE,
   * none shows the password.
   */
  @Test
  void serve_atDebug_everyLineHasOneFormat_andNoPassword() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    Path policy = dir.resolve("p.yaml");
    Files.writeString(policy, String.join("\n",
        "rules:",
        "  api: {limits: [{type: fixed-window, limit: 5, window: 1m}]}",
        "routes:",
        "  - {paths: [/api/**], rules: [api]}",
        "store:",
        "  uri: redis://app:s3cret@127.0.0.1:" + closed,
        "  startupWait: 1s",
        ""));
    Exit e = run(List.of("gateway listening", "sluice-redis: cannot reach"), "serve",
        "--config", policy.toString(), "--listen", "127.0.0.1:0", "--admin", "off",
        "--log-level", "debug");
    List<String> events = e.err().stream().filter(l -> !l.startsWith("\t")).toList();
    assertThat(events).isNotEmpty().allSatisfy(l -> assertThat(l)
        .matches("[0-9T:.-]+Z (DEBUG|INFO |WARN |ERROR) .*"));
    assertThat(events).anyMatch(l -> l.contains(" logger=io.netty."))
        .anyMatch(l -> l.contains(" logger=io.lettuce."))
        .anyMatch(l -> l.contains(" WARN  sluice-redis: cannot reach redis://app:***@127.0.0.1:"
            + closed) && l.contains(" logger=dev.sluice.redis."))
        .anyMatch(l -> l.contains("STORE NOT READY after 1s"))
        .anyMatch(l -> l.contains("redis://app:***@127.0.0.1:" + closed))
        .noneMatch(l -> l.contains("WARNING") || l.contains("SEVERE"));
    // SLF4J's own warnings ("SLF4J(W): No SLF4J providers were found") start a line.
    assertThat(e.err()).noneMatch(l -> l.startsWith("SLF4J"));
    assertThat(String.join("\n", e.err())).doesNotContain("s3cret");
  }

}
