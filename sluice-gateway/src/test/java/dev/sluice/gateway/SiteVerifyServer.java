package dev.sluice.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A real HTTP server speaking Turnstile's {@code siteverify} protocol (a form POST of secret,
 * response and remoteip; a JSON verdict), whose answer the token chooses: {@code good...} a
 * success for app.example.com and action login, {@code bad...} {@code invalid-input-response},
 * {@code otherhost...} another host name, {@code otheraction...} another action,
 * {@code stale...} a challenge solved 10 minutes ago, {@code slow...} no answer until the test
 * ends. It never refuses a token it saw before: the gateway's own replay check must.
 */
public final class SiteVerifyServer implements AutoCloseable {

  public final List<Map<String, String>> calls = new CopyOnWriteArrayList<>();
  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "siteverify");
    t.setDaemon(true);
    return t;
  });
  private final CountDownLatch released = new CountDownLatch(1);

  public SiteVerifyServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(threads);
    server.createContext("/siteverify", this::handle);
    server.start();
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/siteverify");
  }

  /** The tokens asked about, in order. */
  public List<String> tokens() {
    return calls.stream().map(c -> c.get("response")).toList();
  }

  private void handle(HttpExchange x) throws IOException {
    String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    Map<String, String> form = new LinkedHashMap<>();
    for (String pair : body.split("&")) {
      int eq = pair.indexOf('=');
      form.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
          URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
    }
    form.put("content-type", x.getRequestHeaders().getFirst("Content-Type"));
    calls.add(form);
    String token = form.getOrDefault("response", "");
    Instant now = Instant.now();
    String answer;
    if (token.startsWith("slow")) {
      try {
        released.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      answer = success("app.example.com", "login", now);
    } else if (token.startsWith("good")) {
      answer = success("app.example.com", "login", now);
    } else if (token.startsWith("otherhost")) {
      answer = success("evil.example", "login", now);
    } else if (token.startsWith("otheraction")) {
      answer = success("app.example.com", "signup", now);
    } else if (token.startsWith("stale")) {
      answer = success("app.example.com", "login", now.minusSeconds(600));
    } else {
      answer = "{\"success\":false,\"error-codes\":[\"invalid-input-response\"]}";
    }
    byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().set("Content-Type", "application/json");
    x.sendResponseHeaders(200, bytes.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static String success(String hostname, String action, Instant ts) {
    return "{\"success\":true,\"challenge_ts\":\"" + ts + "\",\"hostname\":\"" + hostname
        + "\",\"error-codes\":[],\"action\":\"" + action + "\",\"cdata\":\"\"}";
  }

  @Override
  public void close() {
    released.countDown();
    server.stop(0);
    threads.shutdownNow();
  }
}
