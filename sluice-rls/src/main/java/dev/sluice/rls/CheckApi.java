package dev.sluice.rls;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.http.Json;
import dev.sluice.core.Ticker;
import dev.sluice.policy.Durations;
import dev.sluice.policy.PolicyConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * {@code POST /v1/check}: the rate limit service's decisions for services that are not behind
 * Envoy, as JSON. Two shapes in:
 *
 * <pre>{@code
 * {"domain":"api","descriptors":[{"entries":[{"key":"ip","value":"203.0.113.7"}]}],"hits":1}
 * {"rule":"analysis","key":{"ip":"203.0.113.7"}}
 * }</pre>
 *
 * <p>The first is decided exactly as {@code ShouldRateLimit} decides it (same domains, same
 * counters; per descriptor {@code hits_addend} and {@code limit} too); the second checks a rule
 * of the {@code rules:} section for an identity given as dimension values, as the gateway would.
 * The answer is 200 with the decision either way (a refusal is a decision, not an HTTP error);
 * 400 with {@code {"error":"bad request","detail":...}} names what is wrong with the input.
 *
 * <p>The API can spend any key's quota and ban any address, so it is served only where the
 * operator puts it ({@code rls.checkApi}, {@code --check-api}), and it has a limit of its own
 * ({@code rls.checkApiLimit}): past it, 429 with {@code retry_after_seconds}, before the body is
 * read, so a flood of decision requests decides nothing.
 */
public final class CheckApi {

  /** Where the API is served, on whichever listener serves it. */
  public static final String PATH = "/v1/check";

  /** The largest body accepted. */
  public static final int MAX_BODY_BYTES = 64 * 1024;

  /**
   * An HTTP status and a JSON body.
   *
   * @param status the HTTP status
   * @param json the body
   * @param retryAfterSeconds for a 429 from the API's own limit, the {@code Retry-After}
   *     seconds; else -1
   */
  public record Answer(int status, String json, long retryAfterSeconds) {
    Answer(int status, String json) {
      this(status, json, -1);
    }
  }

  private final Supplier<PolicyConfig> config;
  private final RateLimiter limiter;
  private final Decider decider;
  private final RlsMetrics metrics;
  private final ApiLimit own;

  private CheckApi(Supplier<PolicyConfig> config, RateLimiter limiter, RlsMetrics metrics,
      Ticker ticker) {
    this.config = config;
    this.limiter = limiter;
    this.decider = new Decider(limiter.store());
    this.metrics = metrics;
    this.own = new ApiLimit(ticker);
  }

  /** The API over {@code limiter}'s store; meters into {@code registry} when not null. */
  public static CheckApi create(Supplier<PolicyConfig> config, RateLimiter limiter,
      MeterRegistry registry) {
    return create(config, limiter, registry, Ticker.system());
  }

  /** As above, with the clock of the API's own limit. */
  public static CheckApi create(Supplier<PolicyConfig> config, RateLimiter limiter,
      MeterRegistry registry, Ticker ticker) {
    return new CheckApi(config, limiter,
        registry == null ? RlsMetrics.NONE : new MicrometerRlsMetrics(registry, config), ticker);
  }

  /**
   * Decides a body as sent: not UTF-8 is a 400. The own limit is taken first, so a refused
   * call costs no parsing.
   */
  public CompletionStage<Answer> check(ByteBuffer body) {
    Answer limited = limited(config.get());
    if (limited != null) {
      return CompletableFuture.completedFuture(limited);
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(body).toString();
    } catch (CharacterCodingException e) {
      metrics.invalid();
      return CompletableFuture.completedFuture(new Answer(400, error("bad request",
          "body : not UTF-8 (expected: a JSON object)")));
    }
    return decide(config.get(), text);
  }

  /** Decides a body already decoded (the gateway's listener decodes it itself). */
  public CompletionStage<Answer> check(String body) {
    PolicyConfig snapshot = config.get();
    Answer limited = limited(snapshot);
    return limited != null ? CompletableFuture.completedFuture(limited) : decide(snapshot, body);
  }

  /** The 429 of the API's own limit, or null when a token was left. */
  private Answer limited(PolicyConfig snapshot) {
    Decision d = own.take(snapshot.rls().checkApiLimit());
    if (d.allowed()) {
      return null;
    }
    metrics.limited();
    long retry = Math.max(1, d.retryAfterSeconds());
    var b = snapshot.rls().checkApiLimit();
    return new Answer(429, "{\"error\":\"too many requests\",\"detail\":\"the decision API "
        + "answers at most " + b.burst() + " at once and " + b.refill() + " per "
        + Durations.format(b.period()) + " (rls.checkApiLimit)\","
        + "\"retry_after_seconds\":" + retry + "}", retry);
  }

  private CompletionStage<Answer> decide(PolicyConfig snapshot, String body) {
    try {
      Object parsed = JsonReader.parse(body);
      if (!(parsed instanceof Map<?, ?> m)) {
        throw new CheckRequest.Invalid("body : not an object (expected: {\"domain\":...} or "
            + "{\"rule\":...})");
      }
      if (m.containsKey("rule")) {
        return rule(snapshot, m);
      }
      CheckRequest request = request(m);
      request.validate(snapshot.rls());
      long start = System.nanoTime();
      return decider.decide(snapshot, request).thenApply(statuses -> {
        metrics.record(request, statuses, System.nanoTime() - start);
        return new Answer(200, descriptorsJson(statuses));
      }).exceptionally(e -> new Answer(500, error("internal error", String.valueOf(e))));
    } catch (CheckRequest.Invalid e) {
      metrics.invalid();
      return CompletableFuture.completedFuture(new Answer(400, error("bad request",
          e.getMessage())));
    }
  }

  private CompletionStage<Answer> rule(PolicyConfig snapshot, Map<?, ?> m)
      throws CheckRequest.Invalid {
    for (Object k : m.keySet()) {
      if (!List.of("rule", "key", "hits").contains(k)) {
        throw new CheckRequest.Invalid(k + " : unknown key (expected: one of rule, key, hits)");
      }
    }
    Object name = m.get("rule");
    Rule rule = name instanceof String s ? snapshot.policy().rules().get(s) : null;
    if (rule == null) {
      throw new CheckRequest.Invalid("rule : " + quote(String.valueOf(name))
          + " (expected: one of " + new java.util.TreeSet<>(snapshot.policy().rules().keySet())
          + ")");
    }
    if (rule.limits().isEmpty()) {
      throw new CheckRequest.Invalid("rule : " + quote(rule.name()) + " (expected: a rule with "
          + "limits; a cooldown or concurrency rule is counted by the gateway on its requests' "
          + "answers)");
    }
    Identity id = Identity.empty();
    Object key = m.get("key");
    if (key != null && !(key instanceof Map)) {
      throw new CheckRequest.Invalid("key : not an object (expected: {\"ip\":\"203.0.113.7\"})");
    }
    if (key != null) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) key).entrySet()) {
        if (!(e.getValue() instanceof String v) || v.length() > snapshot.rls().maxValueBytes()) {
          throw new CheckRequest.Invalid("key." + e.getKey() + " : " + describe(e.getValue())
              + " (expected: a string of at most " + snapshot.rls().maxValueBytes() + " bytes)");
        }
        try {
          id = id.with((String) e.getKey(), v);
        } catch (IllegalArgumentException ex) {
          throw new CheckRequest.Invalid("key." + e.getKey() + " : " + ex.getMessage());
        }
      }
    }
    long hits = whole(m.get("hits"), "hits", 1, 1);
    long capacity = Long.MAX_VALUE;
    for (var l : rule.limits()) {
      capacity = Math.min(capacity, l.capacity());
    }
    if (hits > capacity) {
      throw new CheckRequest.Invalid("hits : " + hits + " (expected: <= " + capacity
          + ", the capacity of rule '" + rule.name() + "')");
    }
    return limiter.checkAsync(List.of(rule), id, hits).thenApply(d -> new Answer(200,
        decisionJson(rule, d)));
  }

  static CheckRequest request(Map<?, ?> m) throws CheckRequest.Invalid {
    for (Object k : m.keySet()) {
      if (!List.of("domain", "descriptors", "hits", "hits_addend").contains(k)) {
        throw new CheckRequest.Invalid(k + " : unknown key (expected: one of domain, "
            + "descriptors, hits, or rule and key)");
      }
    }
    Object domain = m.get("domain");
    if (domain != null && !(domain instanceof String)) {
      throw new CheckRequest.Invalid("domain : " + describe(domain) + " (expected: a string)");
    }
    Object ds = m.get("descriptors");
    if (!(ds instanceof List<?> list)) {
      throw new CheckRequest.Invalid("descriptors : " + describe(ds)
          + " (expected: a list of {\"entries\":[{\"key\":...,\"value\":...}]})");
    }
    List<CheckRequest.Descriptor> out = new ArrayList<>();
    for (int d = 0; d < list.size() && d <= 64; d++) {
      String at = "descriptors[" + d + "]";
      if (!(list.get(d) instanceof Map<?, ?> dm) || !(dm.get("entries") instanceof List<?> es)) {
        throw new CheckRequest.Invalid(at + " : " + describe(list.get(d))
            + " (expected: {\"entries\":[{\"key\":...,\"value\":...}]})");
      }
      String[] keys = new String[Math.min(es.size(), 65)];
      String[] values = new String[keys.length];
      for (int i = 0; i < keys.length; i++) {
        if (!(es.get(i) instanceof Map<?, ?> em) || !(em.get("key") instanceof String k)
            || !((em.containsKey("value") ? em.get("value") : "") instanceof String v)) {
          throw new CheckRequest.Invalid(at + ".entries[" + i + "] : " + describe(es.get(i))
              + " (expected: {\"key\":\"...\",\"value\":\"...\"})");
        }
        keys[i] = k;
        values[i] = v;
      }
      String unit = null;
      long perUnit = 0;
      if (dm.get("limit") instanceof Map<?, ?> lm) {
        if (!(lm.get("unit") instanceof String u) || !Decider.UNITS.contains(
            u.toLowerCase(Locale.ROOT))) {
          throw new CheckRequest.Invalid(at + ".limit.unit : " + describe(lm.get("unit"))
              + " (expected: one of " + String.join(", ", Decider.UNITS) + ")");
        }
        unit = u.toLowerCase(Locale.ROOT);
        perUnit = whole(lm.get("requests_per_unit"), at + ".limit.requests_per_unit", 0, -1);
        if (perUnit < 0) {
          throw new CheckRequest.Invalid(at + ".limit.requests_per_unit : missing (expected: "
              + "a whole number >= 0)");
        }
      }
      long hits = whole(dm.get("hits_addend"), at + ".hits_addend", 0, -1);
      out.add(new CheckRequest.Descriptor(keys, values, unit, perUnit, hits));
    }
    Object h = m.containsKey("hits") ? m.get("hits") : m.get("hits_addend");
    return new CheckRequest((String) domain, out, whole(h, "hits", 0, 1));
  }

  private static long whole(Object v, String field, long min, long dflt)
      throws CheckRequest.Invalid {
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof Long n) || n < min || n > Integer.MAX_VALUE) {
      throw new CheckRequest.Invalid(field + " : " + describe(v) + " (expected: a whole number "
          + min + ".." + Integer.MAX_VALUE + ")");
    }
    return n;
  }

  private static String describe(Object v) {
    if (v == null) {
      return "missing";
    }
    if (v instanceof String s) {
      return s.length() > 64 ? quote(s.substring(0, 64)) + "... (" + s.length() + " chars)"
          : quote(s);
    }
    return v instanceof Map ? "an object" : v instanceof List ? "a list" : String.valueOf(v);
  }

  private static String quote(String s) {
    return Json.quote(new StringBuilder(), s).toString();
  }

  static String error(String error, String detail) {
    StringBuilder sb = new StringBuilder("{\"error\":");
    Json.quote(sb, error).append(",\"detail\":");
    return Json.quote(sb, detail).append('}').toString();
  }

  static String descriptorsJson(List<Status> statuses) {
    boolean over = statuses.stream().anyMatch(Status::overLimit);
    StringBuilder sb = new StringBuilder(64 + 96 * statuses.size());
    sb.append("{\"allowed\":").append(!over).append(",\"overall_code\":\"")
        .append(over ? "OVER_LIMIT" : "OK").append("\",\"descriptors\":[");
    for (int i = 0; i < statuses.size(); i++) {
      Status s = statuses.get(i);
      sb.append(i > 0 ? "," : "").append("{\"code\":\"").append(s.overLimit() ? "OVER_LIMIT"
          : "OK").append('"');
      if (s.limit() != null) {
        sb.append(",\"limit\":{\"name\":");
        Json.quote(sb, s.name()).append(",\"requests_per_unit\":").append(s.limit().capacity())
            .append(",\"unit\":\"").append(RlsService.unit(s.limit().windowNanos()))
            .append("\",\"window_seconds\":")
            .append(Headers.ceilSeconds(s.limit().windowNanos())).append('}')
            .append(",\"remaining\":").append(s.remaining())
            .append(",\"reset_seconds\":").append(Headers.ceilSeconds(s.resetNanos()));
      } else {
        sb.append(",\"limit\":null");
      }
      if (s.shadowRefused()) {
        sb.append(",\"shadow_over_limit\":true");
      }
      if (s.degraded()) {
        sb.append(",\"degraded\":true");
      }
      sb.append('}');
    }
    return sb.append("]}").toString();
  }

  static String decisionJson(Rule rule, Decision d) {
    StringBuilder sb = new StringBuilder(160);
    sb.append("{\"allowed\":").append(d.allowed()).append(",\"rule\":");
    Json.quote(sb, rule.name());
    if (d.limitName() != null) {
      sb.append(",\"limit_name\":");
      Json.quote(sb, d.limitName());
    }
    sb.append(",\"limit\":").append(d.limit()).append(",\"remaining\":")
        .append(Math.max(0, d.remaining())).append(",\"reset_seconds\":")
        .append(Headers.ceilSeconds(d.resetNanos()));
    if (!d.allowed()) {
      sb.append(",\"retry_after_seconds\":").append(d.retryAfterSeconds());
    }
    if (d.degraded()) {
      sb.append(",\"degraded\":true");
    }
    return sb.append('}').toString();
  }
}
