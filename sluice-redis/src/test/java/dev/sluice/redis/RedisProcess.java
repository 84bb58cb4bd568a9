package dev.sluice.redis;

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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} on a free loopback port, in a temporary directory, without
 * persistence. Tests start their own; nothing here is mocked. Fails with a clear message when
 * redis-server is not installed (scripts/test installs it), never skips. Public, in this
 * module's test-jar, for other modules' tests on real Redis (the starter's, the server's): the
 * one harness, so a fix to it reaches every module.
 */
public final class RedisProcess implements AutoCloseable {

  private static final List<RedisProcess> ALL = new ArrayList<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      synchronized (ALL) {
        for (RedisProcess p : ALL) {
          p.kill();
        }
      }
    }));
  }

  public final int port;
  private final Path dir;
  private final List<String> extra;
  private volatile Process process;

  private RedisProcess(int port, Path dir, List<String> extra) {
    this.port = port;
    this.dir = dir;
    this.extra = extra;
  }

  static String binary(String name) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File f = new File(d, name);
      if (f.canExecute()) {
        return f.getAbsolutePath();
      }
    }
    throw new AssertionError(name + " not found on PATH: the Redis integration tests need a real "
        + "Redis (Debian packages redis-server and redis-tools; scripts/test installs them)");
  }

  /**
   * On a free port. Another socket may take the port between the check and redis-server's bind
   * (CI failed so once): then it starts again on another port, up to five times.
   */
  public static RedisProcess start(String... extra) {
    for (int attempt = 1; ; attempt++) {
      try {
        return startOn(freePort(), extra);
      } catch (PortTaken e) {
        if (attempt == 5) {
          throw e;
        }
      }
    }
  }

  /** On {@code port}, for a test that chose it before the server runs (a store down at start). */
  public static RedisProcess startOn(int port, String... extra) {
    try {
      Path dir = Files.createTempDirectory("sluice-redis-" + port + "-");
      RedisProcess p = new RedisProcess(port, dir, List.of(extra));
      p.launch();
      synchronized (ALL) {
        ALL.add(p);
      }
      return p;
    } catch (IOException e) {
      throw new AssertionError("cannot start redis-server: " + e, e);
    }
  }

  /**
   * A port that is free, with port + 10000 (the cluster bus) free too, both below the kernel's
   * ephemeral range (Linux: 32768 and up), where an outgoing connection's local port or a
   * listener on port 0 cannot take them between this check and the server's bind.
   */
  public static int freePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(12000, 22000);
      if (bindable(port) && bindable(port + 10000)) {
        return port;
      }
    }
    throw new AssertionError("no free loopback port found");
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private void launch() throws IOException {
    List<String> cmd = new ArrayList<>(List.of(binary("redis-server"),
        "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no",
        "--protected-mode", "no", "--loglevel", "warning"));
    cmd.addAll(extra);
    process = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve("redis.log").toFile()).start();
    awaitReady();
  }

  private void awaitReady() {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      if (!process.isAlive()) {
        String log = log();
        if (log.contains("Address already in use")) {
          throw new PortTaken(port, log);
        }
        throw new AssertionError("redis-server on port " + port + " exited: " + log);
      }
      try {
        String pong = command("PING");
        // a server with requirepass answers NOAUTH: it is up
        if ("+PONG".equals(pong) || pong.startsWith("-NOAUTH")) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      pause(20);
    }
    throw new AssertionError("redis-server on port " + port + " not ready in 10 s: " + log());
  }

  String log() {
    try {
      return Files.readString(dir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  long pid() {
    return process.pid();
  }

  /** SIGSTOP: the server hangs with its sockets open. */
  public void suspend() {
    signal("-STOP");
  }

  /** SIGCONT. */
  public void resume() {
    signal("-CONT");
  }

  private void signal(String sig) {
    try {
      Process kill = new ProcessBuilder("kill", sig, Long.toString(pid())).start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new AssertionError("kill " + sig + " " + pid() + " failed");
      }
    } catch (IOException | InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** SIGKILL, and waits until the process is gone. */
  void kill() {
    Process p = process;
    if (p != null && p.isAlive()) {
      p.destroyForcibly();
      try {
        p.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Starts the server again on the same port (empty, as nothing is persisted). */
  void restart() {
    kill();
    try {
      launch();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Sends one command and returns the reply as text: simple strings with their '+' or '-',
   * integers as ':n', bulk strings as their content, arrays flattened by newlines.
   */
  String command(String... args) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      s.setSoTimeout(5000);
      StringBuilder req = new StringBuilder("*").append(args.length).append("\r\n");
      for (String a : args) {
        byte[] b = a.getBytes(StandardCharsets.UTF_8);
        req.append('$').append(b.length).append("\r\n").append(a).append("\r\n");
      }
      OutputStream out = s.getOutputStream();
      out.write(req.toString().getBytes(StandardCharsets.UTF_8));
      out.flush();
      StringBuilder reply = new StringBuilder();
      read(s.getInputStream(), reply);
      return reply.toString();
    }
  }

  /** Like {@link #command} but throws on transport failure as AssertionError. */
  String cmd(String... args) {
    try {
      return command(args);
    } catch (IOException e) {
      throw new AssertionError("redis " + port + " " + String.join(" ", args) + ": " + e, e);
    }
  }

  private static void read(InputStream in, StringBuilder out) throws IOException {
    String line = line(in);
    char t = line.charAt(0);
    switch (t) {
      case '+', '-', ':' -> out.append(line);
      case '$' -> {
        int n = Integer.parseInt(line.substring(1));
        if (n >= 0) {
          byte[] b = in.readNBytes(n + 2);
          out.append(new String(b, 0, n, StandardCharsets.UTF_8));
        }
      }
      case '*' -> {
        int n = Integer.parseInt(line.substring(1));
        for (int i = 0; i < n; i++) {
          if (i > 0) {
            out.append('\n');
          }
          read(in, out);
        }
      }
      default -> throw new IOException("unexpected reply " + line);
    }
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) != -1) {
      if (c == '\r') {
        in.read();
        return sb.toString();
      }
      sb.append((char) c);
    }
    throw new IOException("connection closed");
  }

  /** Reads one INFO field, e.g. {@code info("commandstats", "cmdstat_evalsha")}. */
  String info(String section, String field) {
    for (String l : cmd("INFO", section).split("\r?\n")) {
      if (l.startsWith(field + ":")) {
        return l.substring(field.length() + 1);
      }
    }
    return null;
  }

  /** The {@code calls=} count of a command in INFO commandstats (0 if never called). */
  long calls(String command) {
    String v = info("commandstats", "cmdstat_" + command);
    if (v == null) {
      return 0;
    }
    for (String part : v.split(",")) {
      if (part.startsWith("calls=")) {
        return Long.parseLong(part.substring(6));
      }
    }
    return 0;
  }

  /** FCALL + EVALSHA + EVAL calls: the store's round trips (its only commands on checks). */
  long scriptCalls() {
    return calls("fcall") + calls("evalsha") + calls("eval");
  }

  public static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** redis-server could not bind its port: another socket had it. */
  static final class PortTaken extends AssertionError {
    PortTaken(int port, String log) {
      super("redis-server on port " + port + " exited, the port was taken: " + log);
    }
  }

  @Override
  public void close() {
    kill();
    synchronized (ALL) {
      ALL.remove(this);
    }
  }
}
