package dev.sluice.server.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
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
 * policy as JSON); with {@link Incidents}, the incident endpoints too ({@code /v1/bans},
 * {@code /v1/refused}, {@code /v1/keys/...}), which can lift bans and reset keys. With an
 * {@link AdminToken}, every {@code /v1/} request needs {@code Authorization: Bearer <token>}
 * (else 401); health and metrics stay open for probes and scrapers, which carry no secrets and
 * change nothing. With a {@link Console}, {@code /} in a browser is the live console page.
 */
public final class AdminServer implements AutoCloseable {

  /** What the listener serves, for its index page and the start-up log. */
  public static final List<String> ENDPOINTS =
      List.of("/healthz", "/livez", "/readyz", "/metrics", "/v1/policy");
  /** The incident endpoints, served when the listener has {@link Incidents}. */
  public static final List<String> INCIDENT_ENDPOINTS = List.of("GET /v1/bans",
      "GET /v1/refused?rule=R", "GET /v1/keys/{rule}/{key}", "DELETE /v1/bans/{rule}/{key}[?keepState]",
      "POST /v1/keys/{rule}/{key}/reset");

  /**
   * Sent with every answer: the console's page may run only its own files (no inline script or
   * style, no other origin), talk only to this listener, and be framed by nobody.
   */
  static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; "
      + "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
      + "frame-ancestors 'none'";

  private final HttpServer server;
  private final ExecutorService executor;
  private final Console console;
  private final AdminToken token;

  private AdminServer(HttpServer server, ExecutorService executor, Console console,
      AdminToken token) {
    this.server = server;
    this.executor = executor;
    this.console = console;
    this.token = token;
  }

  /** Binds {@code address} (port 0 for an ephemeral port) and starts serving. */
  public static AdminServer start(InetSocketAddress address, Metrics metrics,
      Supplier<LoadedPolicy> policy, Supplier<Instant> loadedAt, String version,
      StoreHealth store) throws IOException {
    return start(address, metrics, policy, loadedAt, version, store, null, null);
  }

  /**
   * As above, with the incident endpoints ({@code incidents}, or null for none) and a bearer
   * token on every {@code /v1/} request ({@code token}, or null for none).
   */
  public static AdminServer start(InetSocketAddress address, Metrics metrics,
      Supplier<LoadedPolicy> policy, Supplier<Instant> loadedAt, String version,
      StoreHealth store, Incidents incidents, AdminToken token) throws IOException {
    return start(address, metrics, policy, loadedAt, version, store, incidents, token, null);
  }

  /**
   * As above, with the live console ({@code console}, or null for none) at {@code /}, which the
   * listener then starts and, when closed, closes.
   */
  public static AdminServer start(InetSocketAddress address, Metrics metrics,
      Supplier<LoadedPolicy> policy, Supplier<Instant> loadedAt, String version,
      StoreHealth store, Incidents incidents, AdminToken token, Console console)
      throws IOException {
    HttpServer server = HttpServer.create(address, 64);
    ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "sluice-admin");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", exchange -> {
      boolean streaming = false;
      try {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getPath();
        String rawPath = exchange.getRequestURI().getRawPath();
        if (rawPath.startsWith("/v1/") && refused(exchange, token)) {
          return;
        }
        if (console != null) {
          Console.Served served = console.serve(exchange, method, rawPath,
              exchange.getRequestURI().getRawQuery());
          if (served != Console.Served.NOT_MINE) {
            streaming = served == Console.Served.STREAMING;
            return;
          }
        }
        if (incidents != null && Incidents.owns(rawPath)) {
          Incidents.Caller caller = new Incidents.Caller(
              exchange.getRemoteAddress().getAddress().getHostAddress(),
              token == null ? "anonymous" : token.id(),
              Incidents.Caller.actor(exchange.getRequestHeaders().getFirst("X-Sluice-Actor")));
          Incidents.Reply reply = incidents.handle(method, rawPath,
              exchange.getRequestURI().getRawQuery(), caller);
          if (reply.allow() != null) {
            exchange.getResponseHeaders().set("Allow", reply.allow());
          }
          send(exchange, reply.status(), "application/json", reply.json());
          return;
        }
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
            send(exchange, store.readyToServe() ? 200 : 503, "application/json",
                store.readiness());
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
                "sluice admin " + version + "\n" + String.join("\n", ENDPOINTS) + "\n"
                    + (incidents == null ? "" : String.join("\n", INCIDENT_ENDPOINTS) + "\n")
                    + (console == null ? "" : String.join("\n", Console.ENDPOINTS) + "\n"));
            break;
          default:
            send(exchange, 404, "text/plain; charset=utf-8", "not found\n");
        }
      } catch (IOException | RuntimeException e) {
        // the client went away or rendering failed; the exchange is closed either way
      } finally {
        if (!streaming) {
          exchange.close();   // an event stream closes its own when the page goes
        }
      }
    });
    server.start();
    if (console != null) {
      console.start();
    }
    return new AdminServer(server, executor, console, token);
  }

  /**
   * Serves requests under {@code path} (a {@code /v1/} path; the decision API) with
   * {@code handler}, behind the bearer token like every {@code /v1/} request. The exchange is
   * closed after {@code handler} returns.
   */
  public void handle(String path, HttpHandler handler) {
    server.createContext(path, exchange -> {
      try (exchange) {
        if (!refused(exchange, token)) {
          handler.handle(exchange);
        }
      } catch (IOException | RuntimeException e) {
        // the client went away; the exchange is closed either way
      }
    });
  }

  /** True, after answering 401, when a token is required and the request does not carry it. */
  private static boolean refused(HttpExchange exchange, AdminToken token) throws IOException {
    if (token == null || token.accepts(exchange.getRequestHeaders().getFirst("Authorization"))) {
      return false;
    }
    exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"sluice-admin\"");
    send(exchange, 401, "application/json",
        "{\"error\":\"unauthorized: send Authorization: Bearer <token>\"}\n");
    return true;
  }

  static void send(HttpExchange exchange, int status, String type, String body)
      throws IOException {
    send(exchange, status, type, body.getBytes(StandardCharsets.UTF_8));
  }

  static void send(HttpExchange exchange, int status, String type, byte[] bytes)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    exchange.getResponseHeaders().set("Content-Security-Policy", CSP);
    exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    exchange.getResponseHeaders().set("Referrer-Policy", "no-referrer");
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
    if (console != null) {
      console.close();
    }
    server.stop(0);
    executor.shutdownNow();
  }
}
