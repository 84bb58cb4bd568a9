package dev.sluice.server.migrate;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's nginx, started by a test on a free loopback port in a directory of its own, with a
 * configuration the test writes ({@code PORT} and {@code DIR} in it are filled in), optionally
 * with the exact-clock library preloaded (exact-clock.c says why). Stopped by {@link #close}.
 */
final class NginxServer implements AutoCloseable {

  static final Path BINARY = Path.of("/usr/sbin/nginx");

  final Path dir;
  final int port;
  final Path config;
  private final Process process;

  private NginxServer(Path dir, int port, Path config, Process process) {
    this.dir = dir;
    this.port = port;
    this.config = config;
    this.process = process;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** The exact-clock library, compiled once per directory with Debian's gcc. */
  static Path exactClock(Path dir) throws IOException, InterruptedException {
    Path so = dir.resolve("exact-clock.so");
    if (Files.exists(so)) {
      return so;
    }
    Path c = dir.resolve("exact-clock.c");
    try (InputStream in = NginxServer.class.getResourceAsStream("exact-clock.c")) {
      Files.write(c, in.readAllBytes());
    }
    Process p = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O2", "-o", so.toString(),
        c.toString(), "-ldl").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IOException("gcc failed: " + out);
    }
    return so;
  }

  /** Starts nginx with {@code template}; {@code clock} is the library to preload, or null. */
  static NginxServer start(Path dir, String template, Path clock) throws Exception {
    if (!Files.isExecutable(BINARY)) {
      throw new IllegalStateException(BINARY + " is missing: scripts/test installs Debian's "
          + "nginx (apt-get install nginx)");
    }
    Files.createDirectories(dir.resolve("tmp"));
    int port = freePort();
    boolean root = "root".equals(System.getProperty("user.name"));
    String conf = (root ? "user root;\n" : "") + template.replace("PORT", Integer.toString(port))
        .replace("DIR", dir.toString());
    Path config = dir.resolve("nginx.conf");
    Files.writeString(config, conf);
    List<String> cmd = new ArrayList<>(List.of(BINARY.toString(), "-p", dir.toString(), "-c",
        config.toString(), "-e", dir.resolve("error.log").toString(), "-g", "daemon off;"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve("stdout.log").toFile());
    if (clock != null) {
      pb.environment().put("LD_PRELOAD", clock.toString());
    }
    Process p = pb.start();
    NginxServer server = new NginxServer(dir, port, config, p);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return server;
      } catch (IOException e) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          server.close();
          throw new IllegalStateException("nginx did not start: "
              + Files.readString(dir.resolve("stdout.log")) + "\n" + (Files.exists(
              dir.resolve("error.log")) ? Files.readString(dir.resolve("error.log")) : ""), e);
        }
        Thread.onSpinWait();
      }
    }
  }

  Path accessLog() {
    return dir.resolve("access.log");
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
