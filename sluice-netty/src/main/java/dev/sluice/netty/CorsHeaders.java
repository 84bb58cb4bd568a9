package dev.sluice.netty;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import java.time.Duration;
import java.util.List;

/**
 * CORS headers for responses a handler generates itself (429, 413, 502...), so that a
 * cross-origin browser client sees the real status instead of an opaque CORS failure (seed 004's
 * review). Immutable. With no allowed origin nothing is added.
 */
public final class CorsHeaders {

  /** Headers a browser script may read on a generated response unless configured otherwise. */
  public static final List<String> DEFAULT_EXPOSE = List.of("Retry-After", "X-RateLimit-Limit",
      "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit");

  private static final CorsHeaders DISABLED =
      new CorsHeaders(List.of(), List.of(), List.of(), List.of(), false, Duration.ZERO);

  private final List<String> allowOrigins;
  private final String allowMethods;
  private final String allowHeaders;
  private final String exposeHeaders;
  private final boolean allowCredentials;
  private final long maxAgeSeconds;

  private CorsHeaders(List<String> allowOrigins, List<String> allowMethods,
      List<String> allowHeaders, List<String> exposeHeaders, boolean allowCredentials,
      Duration maxAge) {
    this.allowOrigins = List.copyOf(allowOrigins);
    this.allowMethods = String.join(", ", allowMethods);
    this.allowHeaders = String.join(", ", allowHeaders);
    this.exposeHeaders = String.join(", ", exposeHeaders.isEmpty() ? DEFAULT_EXPOSE : exposeHeaders);
    this.allowCredentials = allowCredentials;
    this.maxAgeSeconds = maxAge == null ? 0 : maxAge.getSeconds();
  }

  /** No CORS headers. */
  public static CorsHeaders disabled() {
    return DISABLED;
  }

  /**
   * CORS headers for {@code allowOrigins} ({@code "*"} for any origin); empty lists are allowed
   * and an empty {@code exposeHeaders} means {@link #DEFAULT_EXPOSE}.
   */
  public static CorsHeaders of(List<String> allowOrigins, List<String> allowMethods,
      List<String> allowHeaders, List<String> exposeHeaders, boolean allowCredentials,
      Duration maxAge) {
    if (allowOrigins == null || allowOrigins.isEmpty()) {
      return DISABLED;
    }
    return new CorsHeaders(allowOrigins, nonNull(allowMethods), nonNull(allowHeaders),
        nonNull(exposeHeaders), allowCredentials, maxAge);
  }

  private static List<String> nonNull(List<String> list) {
    return list == null ? List.of() : list;
  }

  public boolean enabled() {
    return !allowOrigins.isEmpty();
  }

  /** Adds the headers that answer {@code request} to {@code out}. */
  public void apply(HttpRequest request, HttpHeaders out) {
    if (allowOrigins.isEmpty()) {
      return;
    }
    String origin = request == null ? null : request.headers().get(HttpHeaderNames.ORIGIN);
    String allowed;
    if (allowOrigins.contains("*")) {
      // A credentialed request may not be answered with "*": echo the origin instead.
      allowed = allowCredentials && origin != null ? origin : "*";
    } else if (origin != null && allowOrigins.contains(origin)) {
      allowed = origin;
    } else {
      return;
    }
    out.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
    if (!"*".equals(allowed)) {
      out.add(HttpHeaderNames.VARY, HttpHeaderNames.ORIGIN);
    }
    if (allowCredentials) {
      out.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
    }
    out.set(HttpHeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, exposeHeaders);
    if (request != null && HttpMethod.OPTIONS.equals(request.method())) {
      if (!allowMethods.isEmpty()) {
        out.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, allowMethods);
      }
      if (!allowHeaders.isEmpty()) {
        out.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, allowHeaders);
      }
      if (maxAgeSeconds > 0) {
        out.set(HttpHeaderNames.ACCESS_CONTROL_MAX_AGE, maxAgeSeconds);
      }
    }
  }

  @Override
  public String toString() {
    return enabled() ? "CorsHeaders{origins=" + allowOrigins + ", credentials=" + allowCredentials
        + "}" : "CorsHeaders{disabled}";
  }
}
