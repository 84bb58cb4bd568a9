package dev.sluice.server.config;

/**
 * How refusals and limit headers look.
 *
 * @param rateLimitHeaders send {@code X-RateLimit-Limit/Remaining/Reset} (default true)
 * @param ietfHeaders send IETF draft {@code RateLimit-Policy} and {@code RateLimit} (default true)
 * @param htmlTemplate an HTML page for browsers (contents, with {@code {{retryAfter}}} and
 *     {@code {{rule}}} placeholders), or null for the built-in page
 * @param unavailableStatus the status of a fail-closed refusal while the store cannot answer:
 *     503 (default), another 5xx, or 429 to answer it like a limit
 * @param unavailableHtmlTemplate the HTML page for that refusal, or null for the built-in page
 */
public record ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate,
    int unavailableStatus, String unavailableHtmlTemplate) {

  public static final int DEFAULT_UNAVAILABLE_STATUS = 503;

  /** Settings with the default answer to a store outage. */
  public ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate) {
    this(rateLimitHeaders, ietfHeaders, htmlTemplate, DEFAULT_UNAVAILABLE_STATUS, null);
  }

  public static ResponseSettings defaults() {
    return new ResponseSettings(true, true, null);
  }
}
