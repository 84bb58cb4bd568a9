package dev.sluice.netty;

import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.RequestView;
import java.util.Objects;
import java.util.function.Function;

/**
 * What {@link HttpRateLimitHandler} checks and how its answers look. Immutable; a handler reads
 * its settings once per request, so swapping a whole settings object is an atomic reload.
 */
public final class HttpRateLimitSettings {

  private final Function<RequestView, Check> selector;
  private final boolean rateLimitHeaders;
  private final boolean ietfHeaders;
  private final String htmlTemplate;
  private final CorsHeaders cors;
  private final boolean refuseWebSocketBeforeUpgrade;
  private final int unavailableStatus;
  private final String unavailableHtmlTemplate;
  private final boolean limitPreflights;

  private HttpRateLimitSettings(Builder b) {
    this.selector = b.selector;
    this.rateLimitHeaders = b.rateLimitHeaders;
    this.ietfHeaders = b.ietfHeaders;
    this.htmlTemplate = b.htmlTemplate;
    this.cors = b.cors;
    this.refuseWebSocketBeforeUpgrade = b.refuseWebSocketBeforeUpgrade;
    this.unavailableStatus = b.unavailableStatus;
    this.unavailableHtmlTemplate = b.unavailableHtmlTemplate;
    this.limitPreflights = b.limitPreflights;
  }

  /** Settings that check every request against {@code policy}. */
  public static Builder newBuilder(Policy policy) {
    Objects.requireNonNull(policy, "policy");
    return new Builder(policy::select);
  }

  /** Settings that ask {@code selector} which rules apply to a request. */
  public static Builder newBuilder(Function<RequestView, Check> selector) {
    if (selector == null) {
      throw new IllegalArgumentException("selector : null (expected: a function)");
    }
    return new Builder(selector);
  }

  public Builder toBuilder() {
    Builder b = new Builder(selector);
    b.rateLimitHeaders = rateLimitHeaders;
    b.ietfHeaders = ietfHeaders;
    b.htmlTemplate = htmlTemplate;
    b.cors = cors;
    b.refuseWebSocketBeforeUpgrade = refuseWebSocketBeforeUpgrade;
    b.unavailableStatus = unavailableStatus;
    b.unavailableHtmlTemplate = unavailableHtmlTemplate;
    b.limitPreflights = limitPreflights;
    return b;
  }

  public Function<RequestView, Check> selector() {
    return selector;
  }

  /** Whether {@code X-RateLimit-Limit/Remaining/Reset} are sent. */
  public boolean rateLimitHeaders() {
    return rateLimitHeaders;
  }

  /** Whether the IETF draft {@code RateLimit-Policy} and {@code RateLimit} fields are sent. */
  public boolean ietfHeaders() {
    return ietfHeaders;
  }

  /** The HTML page for browsers with {@code {{retryAfter}}} and {@code {{rule}}}, or null. */
  public String htmlTemplate() {
    return htmlTemplate;
  }

  public CorsHeaders cors() {
    return cors;
  }

  /**
   * True: a refused WebSocket upgrade is answered 429 before upgrading (seed 001). False (the
   * default): the upgrade completes and the socket is closed at once with 1013 (seed 000).
   */
  public boolean refuseWebSocketBeforeUpgrade() {
    return refuseWebSocketBeforeUpgrade;
  }

  /**
   * The status of a refusal by a fail-closed rule whose store could not answer ({@code
   * Decision.degraded() && !allowed()}): 503 by default, so clients and dashboards can tell an
   * outage of the limiter from a real limit; 429 gives such refusals the limit's answer again.
   */
  public int unavailableStatus() {
    return unavailableStatus;
  }

  /** The HTML page for browsers refused while the store is unavailable, or null. */
  public String unavailableHtmlTemplate() {
    return unavailableHtmlTemplate;
  }

  /**
   * False (the default): CORS preflights ({@code OPTIONS} with {@code
   * Access-Control-Request-Method}) are passed on unchecked. A refused preflight fails the
   * browser's real request as a CORS error whatever headers it carries, and a preflight spends
   * a quota the real request then lacks.
   */
  public boolean limitPreflights() {
    return limitPreflights;
  }

  /** Builds {@link HttpRateLimitSettings}. */
  public static final class Builder {
    private final Function<RequestView, Check> selector;
    private boolean rateLimitHeaders = true;
    private boolean ietfHeaders = true;
    private String htmlTemplate;
    private CorsHeaders cors = CorsHeaders.disabled();
    private boolean refuseWebSocketBeforeUpgrade;
    private int unavailableStatus = 503;
    private String unavailableHtmlTemplate;
    private boolean limitPreflights;

    private Builder(Function<RequestView, Check> selector) {
      this.selector = selector;
    }

    public Builder rateLimitHeaders(boolean on) {
      this.rateLimitHeaders = on;
      return this;
    }

    public Builder ietfHeaders(boolean on) {
      this.ietfHeaders = on;
      return this;
    }

    public Builder htmlTemplate(String template) {
      this.htmlTemplate = template(template, "htmlTemplate");
      return this;
    }

    /** 429, or a 5xx like the default 503. */
    public Builder unavailableStatus(int status) {
      if (status != 429 && (status < 500 || status > 599)) {
        throw new IllegalArgumentException("unavailableStatus : " + status
            + " (expected: 429 or 500..599)");
      }
      this.unavailableStatus = status;
      return this;
    }

    public Builder unavailableHtmlTemplate(String template) {
      this.unavailableHtmlTemplate = template(template, "unavailableHtmlTemplate");
      return this;
    }

    public Builder limitPreflights(boolean on) {
      this.limitPreflights = on;
      return this;
    }

    private static String template(String template, String field) {
      if (template != null && template.length() > 1 << 20) {
        throw new IllegalArgumentException(field + " : " + template.length()
            + " characters (expected: <= 1048576)");
      }
      return template;
    }

    public Builder cors(CorsHeaders cors) {
      this.cors = cors == null ? CorsHeaders.disabled() : cors;
      return this;
    }

    public Builder refuseWebSocketBeforeUpgrade(boolean on) {
      this.refuseWebSocketBeforeUpgrade = on;
      return this;
    }

    public HttpRateLimitSettings build() {
      return new HttpRateLimitSettings(this);
    }
  }
}
