package dev.sluice.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Upstreams for tests: one that echoes what it received, one that never answers. */
public final class EchoUpstream implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService pool = Executors.newFixedThreadPool(4);

  public EchoUpstream() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.createContext("/", exchange -> {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      StringBuilder sb = new StringBuilder();
      sb.append("method=").append(exchange.getRequestMethod()).append('\n');
      sb.append("uri=").append(exchange.getRequestURI()).append('\n');
      sb.append("bodyBytes=").append(body.length).append('\n');
      sb.append("peerPort=").append(exchange.getRemoteAddress().getPort()).append('\n');
      Map<String, List<String>> sorted = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      sorted.putAll(exchange.getRequestHeaders());
      sorted.forEach((k, v) -> sb.append(k.toLowerCase()).append(": ").append(String.join(" | ", v)).append('\n'));
      byte[] out = sb.toString().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain");
      exchange.getResponseHeaders().set("X-Upstream", "echo");
      boolean chunked = exchange.getRequestURI().getPath().startsWith("/chunked");
      exchange.sendResponseHeaders(200, chunked ? 0 : out.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(out);
      }
    });
    server.setExecutor(pool);
    server.start();
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }

  /** Accepts connections and reads requests, and never answers. */
  public static final class Silent implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    Silent() throws IOException {
      socket = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
      acceptor = new Thread(() -> {
        while (!socket.isClosed()) {
          try {
            accepted.add(socket.accept());
          } catch (IOException e) {
            return;
          }
        }
      }, "silent-upstream");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    public URI uri() {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort());
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (Socket s : accepted) {
        s.close();
      }
    }
  }

  /** A loopback port with nothing listening. */
  public static URI deadPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return URI.create("http://127.0.0.1:" + s.getLocalPort());
    }
  }
}
