package dev.sluice.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An app on plain sockets that checks guesses slowly, as a sign-in or an invite lookup does:
 * every request is recorded as it arrives ({@code METHOD path}), then answered after
 * {@code delayMillis}: 404 for a path containing {@code wrong}, 401 for one containing
 * {@code password}, 200 otherwise, kept alive. What reached it is what the attacker got through.
 */
public final class GuessingApp implements AutoCloseable {

  public final List<String> received = new CopyOnWriteArrayList<>();
  private final ServerSocket server;
  private final long delayMillis;

  public GuessingApp(long delayMillis) throws IOException {
    this.delayMillis = delayMillis;
    server = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "guessing-app");
    t.setDaemon(true);
    t.start();
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** Requests received whose {@code METHOD path} contains {@code part}. */
  public long count(String part) {
    return received.stream().filter(r -> r.contains(part)).count();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread t = new Thread(() -> serve(s), "guessing-app-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        String[] line = head.substring(0, head.indexOf("\r\n")).split(" ");
        long length = 0;
        for (String field : head.split("\r\n")) {
          if (field.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
            length = Long.parseLong(field.substring(15).trim());
          }
        }
        if (in.readNBytes((int) length).length < length) {
          return;
        }
        String path = line[1];
        received.add(line[0] + " " + path);
        Thread.sleep(delayMillis);
        int status = path.contains("wrong") ? 404 : path.contains("password") ? 401 : 200;
        byte[] body = (status == 200 ? "ok" : "no").getBytes(StandardCharsets.US_ASCII);
        out.write(("HTTP/1.1 " + status + " X\r\nContent-Length: " + body.length
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
      }
    } catch (IOException | InterruptedException e) {
      // the gateway closed the connection
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int c = in.read();
      if (c < 0) {
        return null;
      }
      b.write(c);
      state = c == (state % 2 == 0 ? '\r' : '\n') ? state + 1 : c == '\r' ? 1 : 0;
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
