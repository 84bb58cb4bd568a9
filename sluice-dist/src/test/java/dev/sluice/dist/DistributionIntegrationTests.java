package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Unpacks {@code sluice-VERSION.tar.gz} as a user would (with {@code tar}) and runs its
 * {@code bin/sluice}: the version, {@code check} on every example, the systemd unit.
 */
class DistributionIntegrationTests {

  static final String VERSION = System.getProperty("sluice.version");
  static final Path ROOT = Path.of(System.getProperty("sluice.root")).normalize();
  static final Path ARCHIVE = Path.of(System.getProperty("sluice.archive"));

  @TempDir
  static Path unpacked;
  static Path home;

  @BeforeAll
  static void unpack() throws Exception {
    assertThat(ARCHIVE).as("built by mvn package").isRegularFile();
    Result tar = run(unpacked, Map.of(), "tar", "-xzf", ARCHIVE.toString(), "-C", unpacked.toString());
    assertThat(tar.exit).as(tar.output).isZero();
    home = unpacked.resolve("sluice-" + VERSION);
  }

  @Test
  void archive_holdsLauncherJarExamplesUnitLicenseReadme() throws IOException {
    assertThat(Files.getPosixFilePermissions(home.resolve("bin/sluice")))
        .contains(PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);
    assertThat(home.resolve("lib/sluice-server-" + VERSION + ".jar")).isRegularFile();
    assertThat(home.resolve("systemd/sluice.service")).isRegularFile();
    assertThat(home.resolve("LICENSE")).content().contains("Apache License");
    assertThat(home.resolve("README.md")).hasSameTextualContentAs(ROOT.resolve("README.md"));
    assertThat(names(home.resolve("examples")))
        .containsExactlyInAnyOrderElementsOf(names(ROOT.resolve("examples"), "*.{yaml,html,txt}"))
        .doesNotContain("spring-boot");
    try (Stream<Path> top = Files.list(home)) {
      assertThat(top.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("bin", "lib", "examples", "systemd", "LICENSE", "README.md");
    }
  }

  @Test
  void version_printsTheBuildsVersion() throws Exception {
    Result r = run(home, Map.of(), home.resolve("bin/sluice").toString(), "--version");
    assertThat(r.exit).as(r.output).isZero();
    assertThat(r.output.strip()).isEqualTo("sluice " + VERSION);
  }

  @Test
  void launcher_calledThroughASymlink_findsItsJar() throws Exception {
    Path link = Files.createSymbolicLink(unpacked.resolve("sluice-link"), home.resolve("bin/sluice"));
    Result r = run(unpacked, Map.of(), link.toString(), "--version");
    assertThat(r.exit).as(r.output).isZero();
    assertThat(r.output.strip()).isEqualTo("sluice " + VERSION);
  }

  @Test
  void launcher_withAJavaHomeWithoutJava_saysSoAndExits1() throws Exception {
    Result r = run(home, Map.of("JAVA_HOME", unpacked.resolve("no-jdk").toString()),
        home.resolve("bin/sluice").toString(), "--version");
    assertThat(r.exit).isEqualTo(1);
    assertThat(r.output).contains("sluice: java (17 or newer) not found: set JAVA_HOME or put java on PATH");
  }

  static List<String> examples() throws IOException {
    List<String> yaml = names(ROOT.resolve("examples"), "*.yaml");
    assertThat(yaml).isNotEmpty();
    return yaml;
  }

  @ParameterizedTest
  @MethodSource("examples")
  void check_acceptsEachExample(String example) throws Exception {
    Result r = run(home, Map.of(), "bin/sluice", "check", "--config", "examples/" + example);
    assertThat(r.exit).as(r.output).isZero();
    assertThat(r.output).contains("examples/" + example);
  }

  @Test
  void systemdUnit_reloadsWithSighup_andStartsTheInstalledCommand() throws IOException {
    String unit = Files.readString(home.resolve("systemd/sluice.service"));
    assertThat(unit.lines())
        .contains("ExecReload=/bin/kill -HUP $MAINPID",
            "ExecStart=/opt/sluice/bin/sluice serve --config /etc/sluice/policy.yaml",
            "User=sluice", "NoNewPrivileges=yes", "ProtectSystem=strict", "CacheDirectory=sluice");
  }

  /**
   * {@code systemd-analyze verify} on the unit, with /opt/sluice pointed at the unpacked copy so
   * that the ExecStart binary exists. Skipped (reported as skipped) where systemd-analyze is not
   * installed.
   */
  @Test
  void systemdUnit_passesSystemdAnalyzeVerify() throws Exception {
    assumeTrue(onPath("systemd-analyze"), "systemd-analyze is not installed");
    Path dir = Files.createDirectories(unpacked.resolve("unit"));
    Path unit = dir.resolve("sluice.service");
    Files.writeString(unit, Files.readString(home.resolve("systemd/sluice.service"))
        .replace("/opt/sluice", home.toString()));
    Result r = run(dir, Map.of("SYSTEMD_LOG_LEVEL", "warning"), "systemd-analyze", "verify", unit.toString());
    assertThat(r.exit).as(r.output).isZero();
    assertThat(r.output).as(r.output).doesNotContain("sluice.service:");
  }

  /**
   * Issue 21: the first {@code serve} writes a class-data archive when it stops, the next start
   * puts it in place, and the JVM maps it ({@code -Xshare:on} fails when it cannot). Other
   * commands never write one.
   */
  @Test
  void launcher_firstServeWritesAClassDataArchive_theNextStartUsesIt() throws Exception {
    Path cds = unpacked.resolve("cds");
    Map<String, String> env = Map.of("SLUICE_CDS_DIR", cds.toString());
    assertThat(run(home, env, home.resolve("bin/sluice").toString(), "--version").exit).isZero();
    assertThat(cds).doesNotExist();
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/sluice").toString(), "serve", "--listen",
        "127.0.0.1:" + port, "--admin", "off").redirectErrorStream(true)
        .redirectOutput(unpacked.resolve("serve.log").toFile());
    pb.environment().putAll(env);
    Process serve = pb.start();
    try {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      int status = -1;
      while (status != 200 && System.nanoTime() < until && serve.isAlive()) {
        try {
          status = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
              java.net.URI.create("http://127.0.0.1:" + port + "/api/x")).build(),
              java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
          serve.waitFor(50, TimeUnit.MILLISECONDS);
        }
      }
      assertThat(status).as(Files.readString(unpacked.resolve("serve.log"))).isEqualTo(200);
    } finally {
      serve.destroy();
      assertThat(serve.waitFor(60, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(names(cds)).singleElement().asString().matches("sluice-\\d+\\.jsa\\." + serve.pid());
    Result next = run(home, env, home.resolve("bin/sluice").toString(), "--version");
    assertThat(next.exit).as(next.output).isZero();
    assertThat(next.output.strip()).isEqualTo("sluice " + VERSION);
    List<String> placed = names(cds);
    assertThat(placed).singleElement().asString().matches("sluice-\\d+\\.jsa");
    Result mapped = run(home, Map.of(), "java", "-Xshare:on", "-XX:SharedArchiveFile=" + cds.resolve(placed.get(0)),
        "-jar", home.resolve("lib/sluice-server-" + VERSION + ".jar").toString(), "--version");
    assertThat(mapped.exit).as(mapped.output).isZero();
    assertThat(Files.readString(unpacked.resolve("serve.log"))).doesNotContain("cds", "CDS", "warning");
  }

  /**
   * Issue 23: a replay runs on the throughput collector, with transparent huge pages when the
   * kernel offers them, unless JAVA_OPTS chooses; other commands keep the JVM's defaults.
   */
  @Test
  void launcher_replaysOnTheParallelCollectorAndHugePages_unlessJavaOptsChooses() throws Exception {
    Path log = unpacked.resolve("gc-access.log");
    Files.writeString(log, "192.0.2.1 - - [01/Jun/2025:00:00:00 +0000] \"GET /api/items/1 HTTP/1.1\" "
        + "200 10 \"-\" \"curl/8.5.0\"\n");
    String bin = home.resolve("bin/sluice").toString();
    Map<String, String> env = Map.of("SLUICE_CDS", "off", "JAVA_OPTS",
        "-Xlog:gc:stderr -Xlog:pagesize:stderr");
    Result replay = run(home, env, bin, "replay", log.toString());
    assertThat(replay.exit).as(replay.output).isZero();
    assertThat(replay.output).contains("Using Parallel", "1 lines").doesNotContain("warning");
    Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
    boolean offered = Files.isReadable(thp) && Files.readString(thp).matches("(?s).*\\[(always|madvise)\\].*");
    assertThat(replay.output.contains("UseTransparentHugePages=1")).as(replay.output).isEqualTo(offered);
    Result chosen = run(home, Map.of("SLUICE_CDS", "off", "JAVA_OPTS",
        "-XX:+UseSerialGC -XX:-UseTransparentHugePages -Xlog:gc:stderr -Xlog:pagesize:stderr"),
        bin, "replay", log.toString());
    assertThat(chosen.exit).as(chosen.output).isZero();
    assertThat(chosen.output).contains("Using Serial")
        .doesNotContain("Using Parallel", "UseTransparentHugePages=1");
    Result check = run(home, env, bin, "check", "--config", "examples/" + examples().get(0));
    assertThat(check.exit).as(check.output).isZero();
    assertThat(check.output).contains("Using G1");
  }

  static boolean onPath(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  static List<String> names(Path dir) throws IOException {
    return names(dir, "*");
  }

  static List<String> names(Path dir, String glob) throws IOException {
    List<String> names = new ArrayList<>();
    try (var s = Files.newDirectoryStream(dir, glob)) {
      for (Path p : s) {
        names.add(p.getFileName().toString());
      }
    }
    return names;
  }

  record Result(int exit, String output) {}

  /** Runs a command to its end (at most 60 s), stdout and stderr together. */
  static Result run(Path dir, Map<String, String> env, String... command) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not end within 60 s");
    }
    return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }
}
