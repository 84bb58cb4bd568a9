package dev.sluice.policy;

import dev.sluice.core.http.Cors;
import java.time.Duration;
import java.util.List;

/**
 * The {@code cors:} section: CORS headers for responses an adapter generates itself, so a
 * cross-origin browser sees a real 429 rather than an opaque CORS failure (seed 004). Empty
 * {@code allowOrigins} disables them.
 *
 * @param allowOrigins origins echoed in {@code Access-Control-Allow-Origin}; {@code "*"} for any
 * @param limitPreflights whether CORS preflights count against limits (default false: a refused
 *     preflight fails the browser's request as a CORS error whatever the response says)
 */
public record CorsSettings(
    List<String> allowOrigins,
    List<String> allowMethods,
    List<String> allowHeaders,
    List<String> exposeHeaders,
    boolean allowCredentials,
    Duration maxAge,
    boolean limitPreflights) {

  /** Settings under which preflights are not limited. */
  public CorsSettings(List<String> allowOrigins, List<String> allowMethods,
      List<String> allowHeaders, List<String> exposeHeaders, boolean allowCredentials,
      Duration maxAge) {
    this(allowOrigins, allowMethods, allowHeaders, exposeHeaders, allowCredentials, maxAge, false);
  }

  public static CorsSettings disabled() {
    return new CorsSettings(List.of(), List.of(), List.of(), List.of(), false, Duration.ZERO);
  }

  /** Core's {@link Cors}, which every adapter applies. */
  public Cors toCors() {
    return Cors.of(allowOrigins, allowMethods, allowHeaders, exposeHeaders, allowCredentials,
        maxAge);
  }
}
