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

  private HttpRateLimitSettings(Builder b) {
    this.selector = b.selector;
    this.rateLimitHeaders = b.rateLimitHeaders;
    this.ietfHeaders = b.ietfHeaders;
    this.htmlTemplate = b.htmlTemplate;
    this.cors = b.cors;
    this.refuseWebSocketBeforeUpgrade = b.refuseWebSocketBeforeUpgrade;
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

  /** Builds {@link HttpRateLimitSettings}. */
  public static final class Builder {
    private final Function<RequestView, Check> selector;
    private boolean rateLimitHeaders = true;
    private boolean ietfHeaders = true;
    private String htmlTemplate;
    private CorsHeaders cors = CorsHeaders.disabled();
    private boolean refuseWebSocketBeforeUpgrade;

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
      if (template != null && template.length() > 1 << 20) {
        throw new IllegalArgumentException("htmlTemplate : " + template.length()
            + " characters (expected: <= 1048576)");
      }
      this.htmlTemplate = template;
      return this;
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
