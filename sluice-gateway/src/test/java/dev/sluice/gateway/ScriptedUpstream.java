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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An upstream on a plain socket that answers by the last segment of the request's path with exact
 * bytes, for the
 * framings and failures a well-behaved server library does not produce on demand. It records
 * every request head it read and counts the connections it accepted.
 *
 * <ul>
 *   <li>{@code /chunked}: a chunked body in three chunks with an extension and a trailer
 *   <li>{@code /until-close}: a body without length, ended by closing
 *   <li>{@code /early}: 103 Early Hints, then 200
 *   <li>{@code /head}: {@code Content-Length: 5} and, for HEAD, no body
 *   <li>{@code /no-content}: 204
 *   <li>{@code /close}: 200 with {@code Connection: close}, then closes
 *   <li>{@code /garbage}: not HTTP
 *   <li>{@code /silent}: never answers
 *   <li>{@code /head-body}: {@code Content-Length: 5} and its body, also for HEAD
 *   <li>{@code /extra}: a whole response, then bytes nobody asked for
 *   <li>{@code /broken-chunked}: a chunked body whose second size is not hex
 *   <li>{@code /both}: {@code Content-Length} and {@code Transfer-Encoding: chunked}
 *   <li>{@code /te-identity}: {@code Transfer-Encoding: identity} and {@code Content-Length}
 *   <li>anything else: 200 {@code ok} with {@code Connection: keep-alive} and a hop-by-hop field
 * </ul>
 */
final class ScriptedUpstream implements AutoCloseable {

  final List<String> heads = new CopyOnWriteArrayList<>();
  final AtomicInteger accepted = new AtomicInteger();
  /** Connections that ended (the gateway closed them, or the script did). */
  final AtomicInteger ended = new AtomicInteger();
  /** Each request read, as its connection's number (1 for the first accepted) and its path. */
  final List<String> served = new CopyOnWriteArrayList<>();
  /** The numbers of the connections that ended. */
  final java.util.Set<Integer> endedConnections = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final ServerSocket server;

  ScriptedUpstream() throws IOException {
    server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "scripted-upstream");
    t.setDaemon(true);
    t.start();
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        int number = accepted.incrementAndGet();
        Thread t = new Thread(() -> serve(s, number), "scripted-upstream-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  /** The number of the connection that read the last request for {@code path}, or 0. */
  int connectionOfLast(String path) {
    for (int i = served.size() - 1; i >= 0; i--) {
      String e = served.get(i);
      if (e.endsWith(" " + path)) {
        return Integer.parseInt(e.substring(0, e.indexOf(' ')));
      }
    }
    return 0;
  }

  private void serve(Socket s, int number) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        heads.add(head);
        String line = head.substring(0, head.indexOf('\r'));
        String target = line.split(" ")[1];
        served.add(number + " " + target);
        String path = target.substring(target.lastIndexOf('/'));
        boolean isHead = line.startsWith("HEAD ");
        switch (path) {
          case "/chunked" -> write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
              + "Trailer: X-Sum\r\n\r\n5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n"
              + "X-Sum: 11\r\n\r\n");
          case "/until-close" -> {
            write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it");
            return;
          }
          case "/early" -> write(out, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
              + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nlater");
          case "/head" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
              + (isHead ? "" : "hello"));
          case "/no-content" -> write(out, "HTTP/1.1 204 No Content\r\nX-Kind: none\r\n\r\n");
          case "/close" -> {
            write(out, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
            return;
          }
          case "/garbage" -> {
            write(out, "SSH-2.0-OpenSSH\r\n\r\n");
            return;
          }
          case "/head-body" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
          case "/extra" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokGARBAGE");
          case "/broken-chunked" -> write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
              + "\r\n\r\n5\r\nhello\r\nzz\r\n");
          case "/both" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
              + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
          case "/te-identity" -> write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n"
              + "Content-Length: 5\r\n\r\nhello");
          case "/silent" -> {
            while (in.read() >= 0) {
              // never answers
            }
            return;
          }
          default -> write(out, "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\n"
              + "Keep-Alive: timeout=5\r\nX-Hop: gone\r\nX-End: kept\r\nContent-Length: 2\r\n\r\nok");
        }
      }
    } catch (IOException e) {
      // the client went away
    } finally {
      endedConnections.add(number);
      ended.incrementAndGet();
    }
  }

  private static void write(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
          ? state + 1 : (b == '\r' ? 1 : 0);
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
