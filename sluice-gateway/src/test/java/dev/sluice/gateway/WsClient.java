package dev.sluice.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A JDK WebSocket client that records messages and the close code it receives. */
public final class WsClient implements WebSocket.Listener {

  static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
  public final CompletableFuture<Integer> closed = new CompletableFuture<>();
  final CompletableFuture<String> closeReason = new CompletableFuture<>();
  private final StringBuilder partial = new StringBuilder();
  public WebSocket ws;

  public static WsClient connect(URI uri, String... headers) throws Exception {
    WsClient c = new WsClient();
    WebSocket.Builder b = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    c.ws = b.buildAsync(uri, c).get(10, TimeUnit.SECONDS);
    return c;
  }

  @Override
  public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    partial.append(data);
    if (last) {
      messages.add(partial.toString());
      partial.setLength(0);
    }
    webSocket.request(1);
    return null;
  }

  @Override
  public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
    closeReason.complete(reason);
    closed.complete(statusCode);
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    closed.complete(-1);
  }

  public String next() throws InterruptedException {
    return messages.poll(10, TimeUnit.SECONDS);
  }

  public int closeCode() throws Exception {
    return closed.get(10, TimeUnit.SECONDS);
  }

  /** Sends text and waits for the send to complete; false if the socket failed. */
  public boolean send(String text) {
    return send(text, true);
  }

  public boolean send(String text, boolean last) {
    try {
      ws.sendText(text, last).get(10, TimeUnit.SECONDS);
      return true;
    } catch (Exception e) {
      return false;
    }
  }
}
