package dev.sluice.netty;

import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.DelayGate;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.RequestView;
import dev.sluice.core.http.ResponseSpec;
import java.util.Objects;
import java.util.function.Function;

/**
 * What {@link HttpRateLimitHandler} checks and how its answers look. Immutable; a handler reads
 * its settings once per request, so swapping a whole settings object is an atomic reload.
 */
public final class HttpRateLimitSettings {

  private final Function<RequestView, Check> selector;
  private final ResponseSpec responses;
  private final CorsHeaders cors;
  private final boolean refuseWebSocketBeforeUpgrade;
  private final DelayGate delays;
  private final dev.sluice.core.policy.HumanVerifier verifier;
  /** The policy selected by, when there is one: its challenges are part of the admission step. */
  private final Policy policy;

  private HttpRateLimitSettings(Builder b) {
    this.verifier = b.verifier;
    this.selector = b.selector;
    this.policy = b.policy;
    this.responses = b.responses.build();
    this.cors = CorsHeaders.of(responses.cors());
    this.refuseWebSocketBeforeUpgrade = b.refuseWebSocketBeforeUpgrade;
    this.delays = b.delays == null ? DelayGate.create(DelayGate.DEFAULT_MAX_WAITING) : b.delays;
  }

  /** Settings that check every request against {@code policy}. */
  public static Builder newBuilder(Policy policy) {
    Objects.requireNonNull(policy, "policy");
    Builder b = new Builder(policy::select);
    b.policy = policy;
    return b;
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
    b.policy = policy;
    b.responses = responses.toBuilder();
    b.refuseWebSocketBeforeUpgrade = refuseWebSocketBeforeUpgrade;
    b.delays = delays;
    b.verifier = verifier;
    return b;
  }

  public Function<RequestView, Check> selector() {
    return selector;
  }

  /** The policy the selector is, or null for settings made with another selector. */
  public Policy policy() {
    return policy;
  }

  /** How refusals and limit headers look: core's spec, the servlet filter's too. */
  public ResponseSpec responses() {
    return responses;
  }

  /** Whether {@code X-RateLimit-Limit/Remaining/Reset} are sent. */
  public boolean rateLimitHeaders() {
    return responses.rateLimitHeaders();
  }

  /** Whether the IETF draft {@code RateLimit-Policy} and {@code RateLimit} fields are sent. */
  public boolean ietfHeaders() {
    return responses.ietfHeaders();
  }

  /** The HTML page for browsers with {@code {{retryAfter}}} and {@code {{rule}}}, or null. */
  public String htmlTemplate() {
    return responses.htmlTemplate();
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
    return responses.unavailableStatus();
  }

  /** The HTML page for browsers refused while the store is unavailable, or null. */
  public String unavailableHtmlTemplate() {
    return responses.unavailableHtmlTemplate();
  }

  /** Bounds the requests waiting for their token (rules with a {@code delay}). */
  /** The verifier of human checks ({@code humanCheck} routes), or null: those are 503s. */
  public dev.sluice.core.policy.HumanVerifier verifier() {
    return verifier;
  }

  public DelayGate delays() {
    return delays;
  }

  /** See {@link ResponseSpec#limitPreflights()}. */
  public boolean limitPreflights() {
    return responses.limitPreflights();
  }

  /** Builds {@link HttpRateLimitSettings}. */
  public static final class Builder {
    private final Function<RequestView, Check> selector;
    private ResponseSpec.Builder responses = ResponseSpec.newBuilder();
    private boolean refuseWebSocketBeforeUpgrade;
    private DelayGate delays;
    private dev.sluice.core.policy.HumanVerifier verifier;
    private Policy policy;

    private Builder(Function<RequestView, Check> selector) {
      this.selector = selector;
    }

    /** Every answer setting at once (a policy file's {@code response:} and {@code cors:}). */
    public Builder responses(ResponseSpec spec) {
      this.responses = spec.toBuilder();
      return this;
    }

    public Builder rateLimitHeaders(boolean on) {
      responses.rateLimitHeaders(on);
      return this;
    }

    public Builder ietfHeaders(boolean on) {
      responses.ietfHeaders(on);
      return this;
    }

    public Builder htmlTemplate(String template) {
      responses.htmlTemplate(template);
      return this;
    }

    /** 429, or a 5xx like the default 503. */
    public Builder unavailableStatus(int status) {
      responses.unavailableStatus(status);
      return this;
    }

    public Builder unavailableHtmlTemplate(String template) {
      responses.unavailableHtmlTemplate(template);
      return this;
    }

    public Builder limitPreflights(boolean on) {
      responses.limitPreflights(on);
      return this;
    }

    public Builder cors(CorsHeaders cors) {
      responses.cors(cors == null ? null : cors.cors());
      return this;
    }

    public Builder refuseWebSocketBeforeUpgrade(boolean on) {
      this.refuseWebSocketBeforeUpgrade = on;
      return this;
    }

    /**
     * The gate bounding waiting requests, shared by every channel (and kept across reloads by
     * passing the same one); by default each settings object has its own of
     * {@value DelayGate#DEFAULT_MAX_WAITING}.
     */
    /** Verifies human checks' tokens; null (the default): a human-checked route is a 503. */
    public Builder verifier(dev.sluice.core.policy.HumanVerifier verifier) {
      this.verifier = verifier;
      return this;
    }

    public Builder delays(DelayGate gate) {
      this.delays = gate;
      return this;
    }

    public HttpRateLimitSettings build() {
      return new HttpRateLimitSettings(this);
    }
  }
}
