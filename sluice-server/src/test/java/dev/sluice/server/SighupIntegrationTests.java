package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Issue 7: {@code kill -HUP} on a server started without {@code --config} stopped it (exit 129).
 * A real process, since the JVM's reaction to a signal cannot be seen from inside a test JVM:
 * {@code Main} in a child JVM on this test's class path, signalled with {@code kill}.
 */
class SighupIntegrationTests {

  private static final Pattern LISTENING =
      Pattern.compile("gateway listening address=http://127\\.0\\.0\\.1:(\\d+)");

  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final List<String> log = new CopyOnWriteArrayList<>();
  private Process process;

  @AfterEach
  void stop() throws Exception {
    if (process != null && process.isAlive()) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void sighup_withoutConfig_logsNothingToReload_andKeepsServing() throws Exception {
    Assumptions.assumeTrue(Path.of("/bin/kill").toFile().canExecute()
        || Path.of("/usr/bin/kill").toFile().canExecute(), "no kill command");
    // A child inherits an ignored SIGHUP (the tests run under nohup), and the JVM then leaves it
    // ignored: no handler can run, and the server says so by not offering reload on SIGHUP.
    Assumptions.assumeFalse(hangupIgnored(), "SIGHUP is ignored in this process (nohup?), and so "
        + "in its children: run the tests without nohup");
    String java = ProcessHandle.current().info().command().orElse("java");
    process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        "dev.sluice.server.Main", "serve", "--listen", "127.0.0.1:0", "--admin", "off")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getErrorStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          log.add(line);
          lines.add(line);
        }
      } catch (Exception e) {
        // the process ended
      }
    }, "sluice-child-log");
    reader.setDaemon(true);
    reader.start();

    int port = Integer.parseInt(awaitLine(LISTENING).group(1));
    assertThat(healthz(port)).isEqualTo(200);

    for (int i = 0; i < 2; i++) {
      Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).start();
      assertThat(kill.waitFor()).isZero();
      awaitLine(Pattern.compile("nothing to reload.* cause=SIGHUP"));
      assertThat(process.isAlive()).as("alive after SIGHUP " + (i + 1)).isTrue();
      assertThat(healthz(port)).isEqualTo(200);
    }

    // Not Process.destroy(): it closes this side of the pipes at once, losing the last lines.
    assertThat(new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).start()
        .waitFor()).isZero();
    assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    reader.join(10_000);
    assertThat(log.stream().filter(l -> l.contains("sluice stopping")).count()).as("%s", log)
        .isEqualTo(1);
  }

  /** Whether this process ignores SIGHUP (bit 0 of /proc/self/status's SigIgn mask). */
  private static boolean hangupIgnored() throws Exception {
    Path status = Path.of("/proc/self/status");
    if (!status.toFile().canRead()) {
      return false;
    }
    for (String line : java.nio.file.Files.readAllLines(status)) {
      if (line.startsWith("SigIgn:")) {
        return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & 1) != 0;
      }
    }
    return false;
  }

  private int healthz(int port) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** The next log line matching {@code pattern}; fails after 30 s or when the process exits. */
  private Matcher awaitLine(Pattern pattern) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      String line = lines.poll(100, TimeUnit.MILLISECONDS);
      if (line != null) {
        Matcher m = pattern.matcher(line);
        if (m.find()) {
          return m;
        }
      } else if (!process.isAlive()) {
        throw new AssertionError("sluice exited with " + process.exitValue() + " before logging "
            + pattern + "; log: " + log);
      }
    }
    throw new AssertionError("no log line like " + pattern + " within 30 s; log: " + log);
  }
}
