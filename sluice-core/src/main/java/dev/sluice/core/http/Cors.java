package dev.sluice.core.http;

import java.time.Duration;
import java.util.List;

/**
 * CORS headers for responses an adapter generates itself (429, 503, 413, 502...), so that a
 * cross-origin browser client sees the real status instead of an opaque CORS failure (seed 004's
 * review). Immutable. With no allowed origin nothing is added.
 */
public final class Cors {

  /** Headers a browser script may read on a generated response unless configured otherwise. */
  public static final List<String> DEFAULT_EXPOSE = List.of("Retry-After", "X-RateLimit-Limit",
      "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit");

  private static final Cors DISABLED =
      new Cors(List.of(), List.of(), List.of(), List.of(), false, Duration.ZERO);

  private final List<String> allowOrigins;
  private final List<String> allowMethodList;
  private final List<String> allowHeaderList;
  private final List<String> exposeHeaderList;
  private final String allowMethods;
  private final String allowHeaders;
  private final String exposeHeaders;
  private final boolean allowCredentials;
  private final Duration maxAge;

  private Cors(List<String> allowOrigins, List<String> allowMethods, List<String> allowHeaders,
      List<String> exposeHeaders, boolean allowCredentials, Duration maxAge) {
    this.allowOrigins = List.copyOf(allowOrigins);
    this.allowMethodList = List.copyOf(allowMethods);
    this.allowHeaderList = List.copyOf(allowHeaders);
    this.exposeHeaderList = List.copyOf(exposeHeaders);
    this.allowMethods = String.join(", ", allowMethods);
    this.allowHeaders = String.join(", ", allowHeaders);
    this.exposeHeaders = String.join(", ", exposeHeaders.isEmpty() ? DEFAULT_EXPOSE : exposeHeaders);
    this.allowCredentials = allowCredentials;
    this.maxAge = maxAge == null ? Duration.ZERO : maxAge;
  }

  /** No CORS headers. */
  public static Cors disabled() {
    return DISABLED;
  }

  /**
   * CORS headers for {@code allowOrigins} ({@code "*"} for any origin); null lists are empty, and
   * an empty {@code exposeHeaders} means {@link #DEFAULT_EXPOSE}.
   */
  public static Cors of(List<String> allowOrigins, List<String> allowMethods,
      List<String> allowHeaders, List<String> exposeHeaders, boolean allowCredentials,
      Duration maxAge) {
    if (allowOrigins == null || allowOrigins.isEmpty()) {
      return DISABLED;
    }
    return new Cors(allowOrigins, nonNull(allowMethods), nonNull(allowHeaders),
        nonNull(exposeHeaders), allowCredentials, maxAge);
  }

  private static List<String> nonNull(List<String> list) {
    return list == null ? List.of() : list;
  }

  public boolean enabled() {
    return !allowOrigins.isEmpty();
  }

  public List<String> allowOrigins() {
    return allowOrigins;
  }

  public List<String> allowMethods() {
    return allowMethodList;
  }

  public List<String> allowHeaders() {
    return allowHeaderList;
  }

  /** As configured (empty when {@link #DEFAULT_EXPOSE} applies). */
  public List<String> exposeHeaders() {
    return exposeHeaderList;
  }

  public boolean allowCredentials() {
    return allowCredentials;
  }

  public Duration maxAge() {
    return maxAge;
  }

  /**
   * Adds the headers that answer a request from {@code origin} (null when it sent none) with
   * {@code method} to {@code out}.
   */
  public void apply(String origin, String method, Headers out) {
    if (allowOrigins.isEmpty()) {
      return;
    }
    String allowed;
    if (allowOrigins.contains("*")) {
      // A credentialed request may not be answered with "*": echo the origin instead.
      allowed = allowCredentials && origin != null ? origin : "*";
    } else if (origin != null && allowOrigins.contains(origin)) {
      allowed = origin;
    } else {
      return;
    }
    out.set("Access-Control-Allow-Origin", allowed);
    if (!"*".equals(allowed)) {
      out.add("Vary", "origin");   // the gateway's bytes since issue 7
    }
    if (allowCredentials) {
      out.set("Access-Control-Allow-Credentials", "true");
    }
    out.set("Access-Control-Expose-Headers", exposeHeaders);
    if ("OPTIONS".equals(method)) {
      if (!allowMethods.isEmpty()) {
        out.set("Access-Control-Allow-Methods", allowMethods);
      }
      if (!allowHeaders.isEmpty()) {
        out.set("Access-Control-Allow-Headers", allowHeaders);
      }
      if (maxAge.getSeconds() > 0) {
        out.set("Access-Control-Max-Age", Long.toString(maxAge.getSeconds()));
      }
    }
  }

  /** A CORS preflight: {@code OPTIONS} with {@code Access-Control-Request-Method}. */
  public static boolean isPreflight(String method, boolean hasRequestMethodHeader) {
    return "OPTIONS".equals(method) && hasRequestMethodHeader;
  }

  @Override
  public String toString() {
    return enabled() ? "Cors{origins=" + allowOrigins + ", credentials=" + allowCredentials + "}"
        : "Cors{disabled}";
  }
}
