package dev.sluice.server.config;

/**
 * How refusals and limit headers look.
 *
 * @param rateLimitHeaders send {@code X-RateLimit-Limit/Remaining/Reset} (default true)
 * @param ietfHeaders send IETF draft {@code RateLimit-Policy} and {@code RateLimit} (default true)
 * @param htmlTemplate an HTML page for browsers (contents, with {@code {{retryAfter}}} and
 *     {@code {{rule}}} placeholders), or null for the built-in page
 */
public record ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate) {

  public static ResponseSettings defaults() {
    return new ResponseSettings(true, true, null);
  }
}
