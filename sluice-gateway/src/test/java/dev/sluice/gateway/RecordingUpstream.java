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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An upstream on a plain socket that records every request it received whole (its request line,
 * head and body, read by the body's framing as a lenient server would) and answers each with 200
 * {@code ok}. A request whose body never completed is counted as {@link #partial}, not recorded:
 * a test compares what reached it with what the limiter counted.
 */
final class RecordingUpstream implements AutoCloseable {

  /** A request the upstream read to its end. */
  record Request(String line, String head, String body) {
    String target() {
      return line.split(" ")[1];
    }
  }

  final List<Request> requests = new CopyOnWriteArrayList<>();
  final AtomicInteger partial = new AtomicInteger();
  final AtomicInteger accepted = new AtomicInteger();
  private final ServerSocket server;

  RecordingUpstream() throws IOException {
    server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "recording-upstream");
    t.setDaemon(true);
    t.start();
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** The request lines received, in order. */
  List<String> lines() {
    return requests.stream().map(Request::line).toList();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        accepted.incrementAndGet();
        Thread t = new Thread(() -> serve(s), "recording-upstream-conn");
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
        String head = readLine(in, true);
        if (head == null) {
          return;
        }
        String body = readBody(in, head);
        if (body == null) {
          partial.incrementAndGet();
          return;
        }
        requests.add(new Request(head.substring(0, head.indexOf("\r\n")), head, body));
        boolean isHead = head.startsWith("HEAD ");
        out.write(("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Seen: " + requests.size()
            + "\r\n\r\n" + (isHead ? "" : "ok")).getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
      }
    } catch (IOException e) {
      // the gateway went away
    }
  }

  /** The body by its framing; null when the connection ended first. */
  private static String readBody(InputStream in, String head) throws IOException {
    String lower = head.toLowerCase(Locale.ROOT);
    if (lower.contains("\r\ntransfer-encoding: chunked")) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      while (true) {
        String size = readLine(in, false);
        if (size == null) {
          return null;
        }
        int semi = size.indexOf(';');
        int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
        if (n == 0) {
          while (true) {
            String trailer = readLine(in, false);
            if (trailer == null) {
              return null;
            }
            if (trailer.isEmpty()) {
              return body.toString(StandardCharsets.ISO_8859_1);
            }
          }
        }
        byte[] data = in.readNBytes(n);
        if (data.length < n || readLine(in, false) == null) {
          return null;
        }
        body.write(data);
      }
    }
    int at = lower.indexOf("\r\ncontent-length:");
    if (at < 0) {
      return "";
    }
    int end = lower.indexOf("\r\n", at + 2);
    int n = Integer.parseInt(lower.substring(at + 17, end).trim());
    byte[] data = in.readNBytes(n);
    return data.length < n ? null : new String(data, StandardCharsets.ISO_8859_1);
  }

  /** A whole head (up to its empty line) or one line without its CRLF; null at EOF. */
  private static String readLine(InputStream in, boolean wholeHead) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int state = 0;
    while (true) {
      int c = in.read();
      if (c < 0) {
        return null;
      }
      b.write(c);
      if (!wholeHead) {
        if (c == '\n') {
          String line = b.toString(StandardCharsets.ISO_8859_1);
          return line.endsWith("\r\n") ? line.substring(0, line.length() - 2)
              : line.substring(0, line.length() - 1);
        }
        continue;
      }
      state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3))
          ? state + 1 : (c == '\r' ? 1 : 0);
      if (state == 4) {
        return b.toString(StandardCharsets.ISO_8859_1);
      }
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
