package dev.sluice.server.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the Node {@code ws} clients of {@code src/test/node} (a pinned {@code ws}, installed with
 * {@code npm ci} on first use). Without Node or npm it fails, loudly: these tests must not
 * silently stop running.
 */
final class NodeWsClient {

  static final Path DIR = Path.of("src", "test", "node").toAbsolutePath();

  private NodeWsClient() {}

  /** Installs the pinned {@code ws} and Prometheus parser when {@code node_modules} lacks them. */
  static synchronized void install() throws Exception {
    String version = run(List.of("node", "--version"), 30).trim();
    if (!version.matches("v(1[89]|[2-9]\\d)\\..*")) {
      throw new IllegalStateException("the Node ws client tests need Node 18 or newer, found "
          + version);
    }
    if (Files.isDirectory(DIR.resolve("node_modules").resolve("ws"))
        && Files.isDirectory(DIR.resolve("node_modules").resolve("parse-prometheus-text-format"))) {
      return;
    }
    run(List.of("npm", "ci", "--no-audit", "--no-fund"), 300);
  }

  /** Runs one scenario {@code runs} times; returns the script's JSON line. */
  static String scenario(String url, String scenario, int runs) throws Exception {
    String out = run(List.of("node", "close-codes.mjs", url, scenario, Integer.toString(runs)),
        120);
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1];
  }

  private static String run(List<String> command, long timeoutSeconds) throws Exception {
    Path log = Files.createTempFile("sluice-node", ".log");
    try {
      Process p;
      try {
        p = new ProcessBuilder(new ArrayList<>(command)).directory(DIR.toFile())
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      } catch (IOException e) {
        throw new IllegalStateException("cannot run '" + command.get(0) + "': the Node ws client"
            + " tests need Node 18+ and npm on the PATH (scripts/test installs them as root)", e);
      }
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " timed out after "
            + timeoutSeconds + " s:\n" + Files.readString(log, StandardCharsets.UTF_8));
      }
      String out = Files.readString(log, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", command) + " exited with "
            + p.exitValue() + ":\n" + out);
      }
      return out;
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
