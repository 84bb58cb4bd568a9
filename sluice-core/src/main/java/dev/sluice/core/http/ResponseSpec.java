package dev.sluice.core.http;

import dev.sluice.core.Decision;
import dev.sluice.core.InvalidValueException;

/**
 * How an adapter answers a decision over HTTP: the same for the Netty handler and the servlet
 * filter, so the two cannot drift. Immutable; validated where set.
 *
 * <ul>
 *   <li>A refusal by a limit: 429, {@code Retry-After} (whole seconds, rounded up, at least 1),
 *       {@code Cache-Control: no-store}, the limit headers, CORS headers, and a JSON body or,
 *       when {@code Accept} prefers {@code text/html}, a page.
 *   <li>A refusal by a fail-closed rule whose store could not answer ({@code degraded()}): 503
 *       by default, {@code {"error":"rate limiter unavailable","retryAfter":n}} or a page, and no
 *       limit headers (nothing was counted), so an outage is not mistaken for a limit.
 *   <li>An allowed response: the limit headers.
 * </ul>
 */
public final class ResponseSpec {

  public static final int DEFAULT_UNAVAILABLE_STATUS = 503;
  /** nginx's {@code limit_req_status} default is 503; ours is 429, which says what happened. */
  public static final int DEFAULT_REFUSAL_STATUS = 429;
  /** A denied request (the deny list, a failed human check). */
  public static final int DENIED_STATUS = 403;
  /** Templates above this size are refused: a page is read into memory for every refusal. */
  static final int MAX_TEMPLATE_CHARS = 1 << 20;

  private static final ResponseSpec DEFAULTS = newBuilder().build();

  private final boolean rateLimitHeaders;
  private final boolean ietfHeaders;
  private final String htmlTemplate;
  private final int unavailableStatus;
  private final String unavailableHtmlTemplate;
  private final String jsonTemplate;
  private final String unavailableJsonTemplate;
  private final Cors cors;
  private final boolean limitPreflights;
  private final int refusalStatus;
  /** Rules whose refusals have a status of their own ({@code rules.X.status}). */
  private final java.util.Map<String, Integer> ruleStatuses;
  private final boolean challenge;

  private ResponseSpec(Builder b) {
    this.refusalStatus = b.refusalStatus;
    this.ruleStatuses = java.util.Map.copyOf(b.ruleStatuses);
    this.rateLimitHeaders = b.rateLimitHeaders;
    this.ietfHeaders = b.ietfHeaders;
    this.htmlTemplate = b.htmlTemplate;
    this.unavailableStatus = b.unavailableStatus;
    this.unavailableHtmlTemplate = b.unavailableHtmlTemplate;
    this.jsonTemplate = b.jsonTemplate;
    this.unavailableJsonTemplate = b.unavailableJsonTemplate;
    this.cors = b.cors;
    this.limitPreflights = b.limitPreflights;
    this.challenge = b.challenge;
  }

  /** Both header families, the built-in pages, 503 for outages, no CORS, preflights unchecked. */
  public static ResponseSpec defaults() {
    return DEFAULTS;
  }

  public static Builder newBuilder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.rateLimitHeaders = rateLimitHeaders;
    b.ietfHeaders = ietfHeaders;
    b.htmlTemplate = htmlTemplate;
    b.unavailableStatus = unavailableStatus;
    b.unavailableHtmlTemplate = unavailableHtmlTemplate;
    b.jsonTemplate = jsonTemplate;
    b.unavailableJsonTemplate = unavailableJsonTemplate;
    b.cors = cors;
    b.limitPreflights = limitPreflights;
    b.refusalStatus = refusalStatus;
    b.ruleStatuses.putAll(ruleStatuses);
    b.challenge = challenge;
    return b;
  }

  /** The status of a limit's refusal unless its rule has its own: 429 by default. */
  public int refusalStatus() {
    return refusalStatus;
  }

  /** The rules whose refusals have a status of their own, by name. */
  public java.util.Map<String, Integer> ruleStatuses() {
    return ruleStatuses;
  }

  /** Whether {@code X-RateLimit-Limit/Remaining/Reset} are sent. */
  public boolean rateLimitHeaders() {
    return rateLimitHeaders;
  }

  /** Whether the IETF draft {@code RateLimit-Policy} and {@code RateLimit} fields are sent. */
  public boolean ietfHeaders() {
    return ietfHeaders;
  }

  /** The 429 page's template, or null for {@link Bodies#DEFAULT_HTML}. */
  public String htmlTemplate() {
    return htmlTemplate;
  }

  /** The status of a fail-closed refusal while the store cannot answer: 429 or 5xx. */
  public int unavailableStatus() {
    return unavailableStatus;
  }

  public String unavailableHtmlTemplate() {
    return unavailableHtmlTemplate;
  }

  /** The 429 JSON body's template ({@link Bodies#JSON_PLACEHOLDERS}), or null for the built-in. */
  public String jsonTemplate() {
    return jsonTemplate;
  }

  /** The JSON body of a fail-closed refusal while the store cannot answer, or null. */
  public String unavailableJsonTemplate() {
    return unavailableJsonTemplate;
  }

  public Cors cors() {
    return cors;
  }

  /**
   * False (the default): CORS preflights pass unchecked. A refused preflight fails the browser's
   * real request as a CORS error whatever headers it carries, and spends a quota the real
   * request then lacks.
   */
  public boolean limitPreflights() {
    return limitPreflights;
  }

  /**
   * Whether the built-in JSON refusal names {@code "action":"challenge"}: the answer of a rule
   * that challenges browsers to a client that is not one (or not navigating), so that it knows
   * a browser would have been offered a way past.
   */
  public boolean namesChallenge() {
    return challenge;
  }

  /** The status a refusal {@code d} is answered with. */
  public int status(Decision d) {
    if (d.degraded()) {
      return unavailableStatus;
    }
    if (!ruleStatuses.isEmpty() && d.rule() != null) {
      Integer s = ruleStatuses.get(d.rule());
      if (s != null) {
        return s;
      }
    }
    return refusalStatus;
  }

  /** The body of refusal {@code d}: a page when {@code html}, JSON otherwise. */
  public String body(Decision d, boolean html) {
    if (d.degraded()) {
      return html ? Bodies.unavailableHtml(d, unavailableHtmlTemplate)
          : Bodies.unavailableJson(d, unavailableJsonTemplate);
    }
    if (challenge && !html && jsonTemplate == null) {
      return Bodies.refusalJsonNaming(d, "challenge");
    }
    return html ? Bodies.refusalHtml(d, htmlTemplate) : Bodies.refusalJson(d, jsonTemplate);
  }

  /**
   * The headers of refusal {@code d} besides the content type and CORS: {@code Retry-After},
   * {@code Cache-Control: no-store} and, for a limit's refusal, the limit headers.
   */
  public void refusalHeaders(Decision d, Headers out) {
    out.set("Retry-After", "", d.retryAfterSeconds());
    out.set("Cache-Control", "no-store");
    if (!d.degraded()) {
      limitHeaders(d, out);
    }
  }

  /** The limit headers of {@code d} that this spec sends. */
  public void limitHeaders(Decision d, Headers out) {
    LimitHeaders.write(d, rateLimitHeaders, ietfHeaders, out);
  }

  /** Builds a {@link ResponseSpec}. */
  public static final class Builder {
    private boolean rateLimitHeaders = true;
    private boolean ietfHeaders = true;
    private String htmlTemplate;
    private int unavailableStatus = DEFAULT_UNAVAILABLE_STATUS;
    private String unavailableHtmlTemplate;
    private String jsonTemplate;
    private String unavailableJsonTemplate;
    private Cors cors = Cors.disabled();
    private boolean limitPreflights;
    private int refusalStatus = DEFAULT_REFUSAL_STATUS;
    private final java.util.Map<String, Integer> ruleStatuses = new java.util.HashMap<>();
    private boolean challenge;

    private Builder() {}

    /** The status of a limit's refusal: 400..599 (default 429; nginx's limit_req_status). */
    public Builder refusalStatus(int status) {
      this.refusalStatus = checkStatus(status, "status");
      return this;
    }

    /** The status of {@code rule}'s refusals, 400..599, instead of {@link #refusalStatus}. */
    public Builder ruleStatus(String rule, int status) {
      ruleStatuses.put(java.util.Objects.requireNonNull(rule, "rule"),
          checkStatus(status, "rules." + rule + ".status"));
      return this;
    }

    private static int checkStatus(int status, String field) {
      if (status < 400 || status > 599) {
        throw new InvalidValueException(field, Integer.toString(status), "400..599");
      }
      return status;
    }

    public Builder rateLimitHeaders(boolean on) {
      this.rateLimitHeaders = on;
      return this;
    }

    public Builder ietfHeaders(boolean on) {
      this.ietfHeaders = on;
      return this;
    }

    /** The 429 page, with {@code {{retryAfter}}}, {@code {{retryAfterMs}}}, {@code {{rule}}}. */
    public Builder htmlTemplate(String template) {
      this.htmlTemplate = template(template, "htmlTemplate");
      return this;
    }

    /** 429, or a 5xx like the default 503. */
    public Builder unavailableStatus(int status) {
      if (status != 429 && (status < 500 || status > 599)) {
        throw new InvalidValueException("unavailableStatus", Integer.toString(status),
            "429 or 500..599");
      }
      this.unavailableStatus = status;
      return this;
    }

    public Builder unavailableHtmlTemplate(String template) {
      this.unavailableHtmlTemplate = template(template, "unavailableHtmlTemplate");
      return this;
    }

    /**
     * The 429 JSON body, with placeholders {@link Bodies#JSON_PLACEHOLDERS} written bare
     * ({@code "retryAfter":{{retryAfter}}}); null for the built-in body.
     */
    public Builder jsonTemplate(String template) {
      this.jsonTemplate = jsonTemplate(template, "jsonTemplate");
      return this;
    }

    /** The JSON body of a fail-closed refusal while the store cannot answer; null for built-in. */
    public Builder unavailableJsonTemplate(String template) {
      this.unavailableJsonTemplate = jsonTemplate(template, "unavailableJsonTemplate");
      return this;
    }

    private static String jsonTemplate(String template, String field) {
      template(template, field);
      if (template != null) {
        String problem = Bodies.jsonTemplateProblem(template);
        if (problem != null) {
          throw new InvalidValueException(field, template.length() > 60
              ? template.substring(0, 60) + "..." : template,
              "a JSON object whose placeholders are " + Bodies.JSON_PLACEHOLDERS + " (" + problem
                  + ")");
        }
      }
      return template;
    }

    public Builder cors(Cors cors) {
      this.cors = cors == null ? Cors.disabled() : cors;
      return this;
    }

    public Builder limitPreflights(boolean on) {
      this.limitPreflights = on;
      return this;
    }

    /** See {@link ResponseSpec#namesChallenge()}. */
    public Builder namesChallenge(boolean on) {
      this.challenge = on;
      return this;
    }

    private static String template(String template, String field) {
      if (template != null && template.length() > MAX_TEMPLATE_CHARS) {
        throw new InvalidValueException(field, template.length() + " characters",
            "<= " + MAX_TEMPLATE_CHARS);
      }
      return template;
    }

    public ResponseSpec build() {
      return new ResponseSpec(this);
    }
  }
}
