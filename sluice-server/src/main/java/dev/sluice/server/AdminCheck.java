package dev.sluice.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.sluice.rls.CheckApi;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code POST /v1/check} on the admin listener ({@code --check-api admin}), behind the admin
 * token. The admin listener's threads block while a decision is pending (at most
 * {@value #WAIT_SECONDS} s, then 503): it is the place for a few calls from operators' tools;
 * services that ask for every request want {@code --check-api HOST:PORT}, which never blocks.
 */
final class AdminCheck implements HttpHandler {

  static final int WAIT_SECONDS = 10;

  private final CheckApi api;

  AdminCheck(CheckApi api) {
    this.api = api;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    if (!exchange.getRequestURI().getRawPath().equals(CheckApi.PATH)) {
      send(exchange, new CheckApi.Answer(404, "{\"error\":\"not found\"}", -1));
      return;
    }
    if (!exchange.getRequestMethod().equals("POST")) {
      exchange.getResponseHeaders().set("Allow", "POST");
      send(exchange, new CheckApi.Answer(405, "{\"error\":\"method not allowed\",\"detail\":"
          + "\"" + CheckApi.PATH + " answers POST with a JSON body\"}", -1));
      return;
    }
    byte[] body;
    try (InputStream in = exchange.getRequestBody()) {
      body = in.readNBytes(CheckApi.MAX_BODY_BYTES + 1);
    }
    if (body.length > CheckApi.MAX_BODY_BYTES) {
      send(exchange, new CheckApi.Answer(413, "{\"error\":\"payload too large\",\"detail\":"
          + "\"a decision request may be at most " + CheckApi.MAX_BODY_BYTES + " bytes\"}", -1));
      return;
    }
    CheckApi.Answer answer;
    try {
      answer = api.check(ByteBuffer.wrap(body)).toCompletableFuture()
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      answer = new CheckApi.Answer(503, "{\"error\":\"unavailable\",\"detail\":\"no decision "
          + "within " + WAIT_SECONDS + " s\"}", -1);
    } catch (ExecutionException e) {
      answer = new CheckApi.Answer(500, "{\"error\":\"internal error\"}", -1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    send(exchange, answer);
  }

  private static void send(HttpExchange exchange, CheckApi.Answer a) throws IOException {
    byte[] bytes = a.json().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    if (a.retryAfterSeconds() >= 0) {
      exchange.getResponseHeaders().set("Retry-After", Long.toString(a.retryAfterSeconds()));
    }
    exchange.sendResponseHeaders(a.status(), bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
