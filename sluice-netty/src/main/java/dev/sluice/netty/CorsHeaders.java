package dev.sluice.netty;

import dev.sluice.core.http.Cors;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.time.Duration;
import java.util.List;

/**
 * Core's {@link Cors} for Netty requests: CORS headers for responses a handler generates itself
 * (429, 413, 502...), the same as the servlet filter's. Immutable. With no allowed origin nothing
 * is added.
 */
public final class CorsHeaders {

  /** Headers a browser script may read on a generated response unless configured otherwise. */
  public static final List<String> DEFAULT_EXPOSE = Cors.DEFAULT_EXPOSE;

  private static final CorsHeaders DISABLED = new CorsHeaders(Cors.disabled());

  private final Cors cors;

  private CorsHeaders(Cors cors) {
    this.cors = cors;
  }

  /** No CORS headers. */
  public static CorsHeaders disabled() {
    return DISABLED;
  }

  /** {@code cors} for Netty requests. */
  public static CorsHeaders of(Cors cors) {
    return cors == null || !cors.enabled() ? DISABLED : new CorsHeaders(cors);
  }

  /** See {@link Cors#of}. */
  public static CorsHeaders of(List<String> allowOrigins, List<String> allowMethods,
      List<String> allowHeaders, List<String> exposeHeaders, boolean allowCredentials,
      Duration maxAge) {
    return of(Cors.of(allowOrigins, allowMethods, allowHeaders, exposeHeaders, allowCredentials,
        maxAge));
  }

  public Cors cors() {
    return cors;
  }

  public boolean enabled() {
    return cors.enabled();
  }

  /** Adds the headers that answer {@code request} to {@code out}. */
  public void apply(HttpRequest request, HttpHeaders out) {
    if (!cors.enabled()) {
      return;
    }
    String origin = request == null ? null : request.headers().get(HttpHeaderNames.ORIGIN);
    cors.apply(origin, request == null ? null : request.method().name(), new NettyHeaders(out));
  }

  @Override
  public String toString() {
    return "CorsHeaders" + cors.toString().substring("Cors".length());
  }
}
