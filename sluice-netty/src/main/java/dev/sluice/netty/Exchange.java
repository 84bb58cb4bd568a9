package dev.sluice.netty;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AttributeKey;

/**
 * One HTTP exchange's facts, computed once and read by every handler of the pipeline: the view
 * of the request (peer text, upgrade flag and client address computed at most once), and the
 * settings the exchange runs under, pinned when its head arrived, so a reload cannot land between
 * two handlers of one request (the limiter deciding by one policy, the guard by another).
 *
 * <p>The first handler that sees a request begins its exchange ({@link #begin}); the others find
 * it with {@link #of}. A handler that finds none (it runs first) begins one itself. Settings left
 * null are read by each handler from its own supplier.
 */
public final class Exchange {

  private static final AttributeKey<Exchange> KEY = AttributeKey.valueOf("sluice.exchange");

  private final NettyRequestView view;
  private final HttpRateLimitSettings http;
  private final WebSocketGuardSettings ws;
  private final Object attachment;
  private String route;

  private Exchange(NettyRequestView view, HttpRateLimitSettings http, WebSocketGuardSettings ws,
      Object attachment) {
    this.view = view;
    this.http = http;
    this.ws = ws;
    this.attachment = attachment;
  }

  /**
   * Begins the exchange of {@code request} on {@code ch} with the given settings (each may be
   * null) and an application object the later handlers of the same application read back.
   */
  public static Exchange begin(Channel ch, HttpRequest request, HttpRateLimitSettings http,
      WebSocketGuardSettings ws, Object attachment) {
    Exchange e = new Exchange(NettyRequestView.of(request, ch.remoteAddress()), http, ws,
        attachment);
    ch.attr(KEY).set(e);
    return e;
  }

  /** The exchange of {@code request} on {@code ch}, or null when none was begun for it. */
  public static Exchange of(Channel ch, HttpRequest request) {
    Exchange e = ch.attr(KEY).get();
    return e != null && e.view.request() == request ? e : null;
  }

  /** The exchange of {@code request}, begun here (without pinned settings) when there is none. */
  static Exchange ofOrBegin(Channel ch, HttpRequest request) {
    Exchange e = of(ch, request);
    return e != null ? e : begin(ch, request, null, null, null);
  }

  public NettyRequestView view() {
    return view;
  }

  public HttpRequest request() {
    return view.request();
  }

  /** The rate-limit settings pinned for this exchange, or null. */
  public HttpRateLimitSettings http() {
    return http;
  }

  /** The WebSocket guard settings pinned for this exchange, or null. */
  public WebSocketGuardSettings ws() {
    return ws;
  }

  /** The name of the route the limiter matched, or null (none matched, or not checked yet). */
  public String route() {
    return route;
  }

  void route(String route) {
    this.route = route;
  }

  /** The application's own object for this exchange (the gateway's config snapshot), or null. */
  public Object attachment() {
    return attachment;
  }
}
