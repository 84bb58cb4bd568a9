package dev.sluice.server.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyFormat;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The admin listener (loopback by default): {@code /healthz} and {@code /livez} (liveness: the
 * process answers), {@code /readyz} (readiness: 200 once the store is ready, 503 with a JSON
 * reason before), {@code /metrics} (Prometheus text) and {@code /v1/policy} (the effective
 * policy as JSON). Read-only: nothing here changes what the gateway does, so exposing it by
 * mistake leaks the policy but cannot loosen it.
 */
public final class AdminServer implements AutoCloseable {

  /** What the listener serves, for its index page and the start-up log. */
  public static final List<String> ENDPOINTS =
      List.of("/healthz", "/livez", "/readyz", "/metrics", "/v1/policy");

  private final HttpServer server;
  private final ExecutorService executor;

  private AdminServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /** Binds {@code address} (port 0 for an ephemeral port) and starts serving. */
  public static AdminServer start(InetSocketAddress address, Metrics metrics,
      Supplier<LoadedPolicy> policy, Supplier<Instant> loadedAt, String version,
      StoreHealth store) throws IOException {
    HttpServer server = HttpServer.create(address, 64);
    ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "sluice-admin");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", exchange -> {
      try (exchange) {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getPath();
        if (!method.equals("GET") && !method.equals("HEAD")) {
          exchange.getResponseHeaders().set("Allow", "GET, HEAD");
          send(exchange, 405, "text/plain; charset=utf-8", "method not allowed\n");
          return;
        }
        switch (path) {
          case "/healthz":
          case "/livez":
            send(exchange, 200, "application/json", "{\"status\":\"ok\"}\n");
            break;
          case "/readyz":
            send(exchange, store.ready() ? 200 : 503, "application/json", store.readiness());
            break;
          case "/metrics":
            send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.render());
            break;
          case "/v1/policy": {
            LoadedPolicy p = policy.get();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("source", p.sourceName());
            body.put("loadedAt", String.valueOf(loadedAt.get()));
            body.put("version", version);
            body.put("policy", p.effective());
            send(exchange, 200, "application/json", PolicyFormat.toJson(body) + "\n");
            break;
          }
          case "/":
            send(exchange, 200, "text/plain; charset=utf-8",
                "sluice admin " + version + "\n" + String.join("\n", ENDPOINTS) + "\n");
            break;
          default:
            send(exchange, 404, "text/plain; charset=utf-8", "not found\n");
        }
      } catch (IOException | RuntimeException e) {
        // the client went away or rendering failed; the exchange is closed either way
      }
    });
    server.start();
    return new AdminServer(server, executor);
  }

  private static void send(HttpExchange exchange, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
