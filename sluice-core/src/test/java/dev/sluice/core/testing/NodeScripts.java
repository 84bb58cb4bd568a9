package dev.sluice.core.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the Node clients of a module's {@code src/test/node} (sluice-rls: a gRPC rate-limit client;
 * sluice-server: the WebSocket close-code client and a Prometheus text parser), whose pinned
 * packages, the {@code dependencies} of its {@code package.json}, {@code npm ci} installs on
 * first use. Without Node 18+ or npm it fails, loudly: these tests must not silently stop
 * running. In this test-jar for every module with Node clients.
 */
public final class NodeScripts {

  public static final Path DIR = Path.of("src", "test", "node").toAbsolutePath();

  private static final Pattern DEPENDENCIES =
      Pattern.compile("\"dependencies\"\\s*:\\s*\\{([^}]*)}");
  private static final Pattern NAME = Pattern.compile("\"([^\"]+)\"\\s*:");

  private NodeScripts() {}

  /** Checks Node's version and runs {@code npm ci} when a pinned package is missing. */
  public static synchronized void install() throws Exception {
    String version = run(List.of("node", "--version"), 30).trim();
    if (!version.matches("v(1[89]|[2-9]\\d)\\..*")) {
      throw new IllegalStateException("the Node client tests need Node 18 or newer, found "
          + version);
    }
    Path modules = DIR.resolve("node_modules");
    if (packages().stream().allMatch(p -> Files.isDirectory(modules.resolve(p)))) {
      return;
    }
    run(List.of("npm", "ci", "--no-audit", "--no-fund"), 300);
  }

  /** The package names {@code package.json} depends on. */
  static List<String> packages() throws IOException {
    String json = Files.readString(DIR.resolve("package.json"), StandardCharsets.UTF_8);
    Matcher deps = DEPENDENCIES.matcher(json);
    if (!deps.find()) {
      throw new IllegalStateException(DIR.resolve("package.json") + " has no dependencies");
    }
    List<String> names = new ArrayList<>();
    for (Matcher m = NAME.matcher(deps.group(1)); m.find(); ) {
      names.add(m.group(1));
    }
    return names;
  }

  /** Runs {@code command} in {@link #DIR}; its output, or an exception with it on failure. */
  public static String run(List<String> command, long timeoutSeconds) throws Exception {
    Path log = Files.createTempFile("sluice-node", ".log");
    try {
      Process p;
      try {
        p = new ProcessBuilder(new ArrayList<>(command)).directory(DIR.toFile())
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      } catch (IOException e) {
        throw new IllegalStateException("cannot run '" + command.get(0) + "': the Node client "
            + "tests need Node 18+ and npm on the PATH (scripts/test installs them as root)", e);
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
