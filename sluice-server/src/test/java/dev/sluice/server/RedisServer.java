package dev.sluice.server;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} on a loopback port, without persistence, for the server's own
 * integration tests (sluice-redis's test harness is not shared across modules): the start-up
 * tests and the gateway's tests on a Redis store. Fails with a clear message when redis-server
 * is not installed.
 */
public final class RedisServer implements AutoCloseable {

  public final int port;
  private final Process process;

  private RedisServer(int port, Process process) {
    this.port = port;
    this.process = process;
  }

  public static RedisServer start(int port, String... extra) throws IOException {
    Path dir = Files.createTempDirectory("sluice-server-redis-");
    List<String> cmd = new ArrayList<>(List.of(binary(), "--port", Integer.toString(port),
        "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
        "--protected-mode", "no", "--loglevel", "warning"));
    cmd.addAll(List.of(extra));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve("redis.log").toFile()).start();
    RedisServer server = new RedisServer(port, p);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      if (!p.isAlive()) {
        throw new AssertionError("redis-server exited: " + Files.readString(
            dir.resolve("redis.log")));
      }
      if (answers(port)) {
        return server;
      }
      pause(20);
    }
    server.close();
    throw new AssertionError("redis-server on port " + port + " not ready in 10 s");
  }

  /** PONG, or NOAUTH from a server with requirepass: either way it is up. */
  private static boolean answers(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      s.setSoTimeout(2000);
      OutputStream out = s.getOutputStream();
      out.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      int c = in.read();
      return c == '+' || c == '-';
    } catch (IOException e) {
      return false;
    }
  }

  private static String binary() {
    for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File f = new File(d, "redis-server");
      if (f.canExecute()) {
        return f.getAbsolutePath();
      }
    }
    throw new AssertionError("redis-server not found on PATH (Debian package redis-server; "
        + "scripts/test installs it)");
  }

  /** A loopback port nobody listens on now. */
  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  public static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** SIGSTOP: the server hangs with its sockets open, so calls wait for their deadline. */
  public void suspend() {
    signal("-STOP");
  }

  /** SIGCONT. */
  public void resume() {
    signal("-CONT");
  }

  private void signal(String sig) {
    try {
      Process kill = new ProcessBuilder("kill", sig, Long.toString(process.pid())).start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new AssertionError("kill " + sig + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
