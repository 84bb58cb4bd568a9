package dev.sluice.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real upstream app that records every request it received ({@code METHOD path body}) and
 * answers: {@code /api/invites/CODE} and {@code /api/invites/CODE/join} 200 for the right code
 * ({@value #RIGHT}) and 404 for any other; {@code /slow...} only once the test releases it
 * (counting arrivals); anything else 200 {@code ok}.
 */
public final class ScriptedApp implements AutoCloseable {

  public static final String RIGHT = "right-code";

  public final List<String> requests = new CopyOnWriteArrayList<>();
  public final AtomicInteger slowArrived = new AtomicInteger();
  private final CountDownLatch release = new CountDownLatch(1);
  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "scripted-app");
    t.setDaemon(true);
    return t;
  });

  public ScriptedApp() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** Lets every held /slow request be answered. */
  public void release() {
    release.countDown();
  }

  private void handle(HttpExchange x) throws IOException {
    String path = x.getRequestURI().getPath();
    String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    requests.add(x.getRequestMethod() + " " + path + (body.isEmpty() ? "" : " " + body));
    int status = 200;
    if (path.startsWith("/api/invites/")) {
      String code = path.substring("/api/invites/".length()).replace("/join", "");
      status = code.equals(RIGHT) ? 200 : 404;
    } else if (path.startsWith("/slow")) {
      slowArrived.incrementAndGet();
      try {
        release.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    byte[] bytes = (status == 200 ? "ok" : "{\"error\":\"no such invite\"}")
        .getBytes(StandardCharsets.UTF_8);
    x.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(bytes);
    } catch (IOException e) {
      // the gateway went away (its client vanished)
    }
  }

  /** Requests received whose line starts with {@code prefix}. */
  public long count(String prefix) {
    return requests.stream().filter(r -> r.startsWith(prefix)).count();
  }

  @Override
  public void close() {
    release.countDown();
    server.stop(0);
    threads.shutdownNow();
  }
}
