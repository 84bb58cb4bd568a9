package dev.sluice.netty;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.RequestView;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A {@link RequestView} over a Netty {@link HttpRequest} and the socket peer. The peer's text and
 * the upgrade flag are computed once, the client address once per resolver; cookies and the query
 * string are decoded on first use and only within bounds, so a hostile request costs little: at
 * most {@value #MAX_COOKIE_CHARS} characters of {@code Cookie} headers and
 * {@value #MAX_QUERY_PARAMS} query parameters are looked at.
 */
public final class NettyRequestView implements RequestView {

  static final int MAX_COOKIE_CHARS = 8 * 1024;
  static final int MAX_QUERY_PARAMS = 64;

  private final HttpRequest request;
  private final SocketAddress remote;
  private String peer;
  private final boolean upgrade;
  private QueryStringDecoder query;
  private List<Cookie> cookies;
  private ClientAddressResolver resolvedBy;
  private ClientAddress clientAddress;

  private NettyRequestView(HttpRequest request, SocketAddress remote) {
    this.request = request;
    this.remote = remote;
    this.upgrade = isWebSocketUpgrade(request);
  }

  /** A view of {@code request} received from {@code peer} (may be null when unknown). */
  public static NettyRequestView of(HttpRequest request, SocketAddress peer) {
    return new NettyRequestView(request, peer);
  }

  /** The peer's address as text, without an IPv6 zone ({@code %eth0}); null when unknown. */
  static String peerText(SocketAddress peer) {
    if (peer instanceof InetSocketAddress inet) {
      if (inet.getAddress() == null) {
        return null;
      }
      String text = inet.getAddress().getHostAddress();
      int zone = text.indexOf('%');
      return zone < 0 ? text : text.substring(0, zone);
    }
    return peer == null ? null : peer.toString();
  }

  /** The request this view reads. */
  public HttpRequest request() {
    return request;
  }

  @Override
  public String method() {
    return request.method().name();
  }

  @Override
  public String path() {
    return query().rawPath();
  }

  @Override
  public List<String> headers(String name) {
    return request.headers().getAll(name);
  }

  @Override
  public String header(String name) {
    return request.headers().get(name);
  }

  @Override
  public String cookie(String name) {
    if (cookies == null) {
      cookies = decodeCookies();
    }
    for (Cookie c : cookies) {
      if (c.name().equals(name)) {
        return c.value();
      }
    }
    return null;
  }

  private List<Cookie> decodeCookies() {
    List<String> lines = request.headers().getAll(HttpHeaderNames.COOKIE);
    if (lines.isEmpty()) {
      return List.of();
    }
    String joined = lines.size() == 1 ? lines.get(0) : String.join("; ", lines);
    if (joined.length() > MAX_COOKIE_CHARS) {
      joined = joined.substring(0, MAX_COOKIE_CHARS);
    }
    try {
      return ServerCookieDecoder.STRICT.decodeAll(joined);
    } catch (RuntimeException e) {
      return List.of();
    }
  }

  @Override
  public String query(String name) {
    List<String> values;
    try {
      values = query().parameters().get(name);
    } catch (RuntimeException e) {
      return null;
    }
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  private QueryStringDecoder query() {
    if (query == null) {
      query = new QueryStringDecoder(request.uri(), StandardCharsets.UTF_8, true, MAX_QUERY_PARAMS);
    }
    return query;
  }

  /** The peer's address as text, formatted on first use (forwarding headers, logs). */
  @Override
  public String peer() {
    if (peer == null && remote != null) {
      peer = peerText(remote);
    }
    return peer;
  }

  @Override
  public boolean websocketUpgrade() {
    return upgrade;
  }

  /** Resolved once per resolver: the limiter, the connection caps and the keys share it. */
  @Override
  public ClientAddress clientAddress(ClientAddressResolver resolver) {
    if (resolver != resolvedBy) {
      clientAddress = remote instanceof InetSocketAddress inet && inet.getAddress() != null
          ? resolver.resolvePeer(inet.getAddress(), this::headers)
          : resolver.resolve(peer(), this::headers);
      resolvedBy = resolver;
    }
    return clientAddress;
  }

  /** True for a {@code GET} carrying {@code Upgrade: websocket} and {@code Connection: upgrade}. */
  public static boolean isWebSocketUpgrade(HttpRequest request) {
    return HttpMethod.GET.equals(request.method())
        && request.headers().containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true)
        && request.headers().contains(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
  }

  @Override
  public String toString() {
    return "NettyRequestView{" + request.method() + " " + request.uri() + " from " + peer() + "}";
  }
}
