package dev.sluice.policy;

import dev.sluice.core.http.ResponseSpec;

/**
 * The {@code response:} section: how refusals and limit headers look. Defaults are core's
 * ({@link ResponseSpec#defaults()}), which the Netty handler and the servlet filter answer with.
 *
 * @param rateLimitHeaders send {@code X-RateLimit-Limit/Remaining/Reset} (default true)
 * @param ietfHeaders send IETF draft {@code RateLimit-Policy} and {@code RateLimit} (default true)
 * @param htmlTemplate an HTML page for browsers (contents, with {@code {{retryAfter}}} and
 *     {@code {{rule}}} placeholders), or null for the built-in page
 * @param unavailableStatus the status of a fail-closed refusal while the store cannot answer:
 *     503 (default), another 5xx, or 429 to answer it like a limit
 * @param unavailableHtmlTemplate the HTML page for that refusal, or null for the built-in page
 * @param htmlTemplatePath {@code htmlTemplate} as written in the file, or null
 * @param unavailableHtmlTemplatePath {@code unavailableHtmlTemplate} as written, or null
 * @param jsonTemplate the 429's JSON body with {@code {{retryAfter}}}-style placeholders, or null
 *     for the built-in body
 * @param unavailableJsonTemplate the JSON body of that store-outage refusal, or null
 * @param status the status of a limit's refusal, 400..599 (default 429; a rule's {@code status}
 *     wins), nginx's {@code limit_req_status}
 */
public record ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate,
    int unavailableStatus, String unavailableHtmlTemplate, String htmlTemplatePath,
    String unavailableHtmlTemplatePath, String jsonTemplate, String unavailableJsonTemplate,
    int status) {

  public ResponseSettings {
    status = status == 0 ? ResponseSpec.DEFAULT_REFUSAL_STATUS : status;
  }

  /** Settings whose refusals are 429s. */
  public ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate,
      int unavailableStatus, String unavailableHtmlTemplate, String htmlTemplatePath,
      String unavailableHtmlTemplatePath, String jsonTemplate, String unavailableJsonTemplate) {
    this(rateLimitHeaders, ietfHeaders, htmlTemplate, unavailableStatus, unavailableHtmlTemplate,
        htmlTemplatePath, unavailableHtmlTemplatePath, jsonTemplate, unavailableJsonTemplate,
        ResponseSpec.DEFAULT_REFUSAL_STATUS);
  }

  /** Settings with the built-in JSON bodies. */
  public ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate,
      int unavailableStatus, String unavailableHtmlTemplate, String htmlTemplatePath,
      String unavailableHtmlTemplatePath) {
    this(rateLimitHeaders, ietfHeaders, htmlTemplate, unavailableStatus, unavailableHtmlTemplate,
        htmlTemplatePath, unavailableHtmlTemplatePath, null, null);
  }

  public static final int DEFAULT_UNAVAILABLE_STATUS = ResponseSpec.DEFAULT_UNAVAILABLE_STATUS;

  /** Settings whose templates were not read from files. */
  public ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate,
      int unavailableStatus, String unavailableHtmlTemplate) {
    this(rateLimitHeaders, ietfHeaders, htmlTemplate, unavailableStatus, unavailableHtmlTemplate,
        null, null);
  }

  /** Settings with the default answer to a store outage. */
  public ResponseSettings(boolean rateLimitHeaders, boolean ietfHeaders, String htmlTemplate) {
    this(rateLimitHeaders, ietfHeaders, htmlTemplate, DEFAULT_UNAVAILABLE_STATUS, null);
  }

  public static ResponseSettings defaults() {
    ResponseSpec d = ResponseSpec.defaults();
    return new ResponseSettings(d.rateLimitHeaders(), d.ietfHeaders(), d.htmlTemplate(),
        d.unavailableStatus(), d.unavailableHtmlTemplate());
  }
}
