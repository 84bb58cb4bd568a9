package dev.sluice.rls;

import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.RlsDescriptor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The rate limit service's meters in the server's Micrometer registry (scraped at
 * {@code /metrics}):
 *
 * <ul>
 *   <li>{@code sluice_rls_decisions_total{domain,descriptor,outcome}}: one per descriptor
 *       answered. {@code domain} is a configured domain or {@code _unknown}; {@code descriptor}
 *       is the matched node's path ({@code messaging.message_type=marketing.to_number}),
 *       {@code _none} (no limit matched) or {@code _override} (the request's own limit); with
 *       {@code detailed_metric: true} the path is followed by the request's actual values.
 *       {@code outcome}: {@code ok}, {@code over_limit}, {@code shadow_over_limit},
 *       {@code unlimited}, {@code no_limit}, {@code degraded_ok}, {@code degraded_over_limit}.
 *   <li>{@code sluice_rls_requests_seconds}: time from request to answer.
 *   <li>{@code sluice_rls_invalid_total}: requests answered {@code INVALID_ARGUMENT} (gRPC) or
 *       400 ({@code POST /v1/check}).
 *   <li>{@code sluice_rls_check_limited_total}: {@code POST /v1/check} requests refused with 429
 *       by the decision API's own limit ({@code rls.checkApiLimit}).
 * </ul>
 *
 * <p>Labels are bounded by the policy, not by callers: at most {@link #MAX_SERIES} descriptor
 * series (detailed ones included); past that, new ones count under {@code _other}.
 */
final class MicrometerRlsMetrics implements RlsMetrics {

  static final int MAX_SERIES = 1000;

  private final MeterRegistry registry;
  private final Supplier<PolicyConfig> config;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Timer timer;
  private final Counter invalid;
  private final Counter limited;

  MicrometerRlsMetrics(MeterRegistry registry, Supplier<PolicyConfig> config) {
    this.registry = registry;
    this.config = config;
    this.timer = Timer.builder("sluice_rls_requests").description(
        "Rate limit service requests, from arrival to answer").register(registry);
    this.invalid = Counter.builder("sluice_rls_invalid").description(
        "Rate limit service requests refused as INVALID_ARGUMENT").register(registry);
    this.limited = Counter.builder("sluice_rls_check_limited").description(
        "POST /v1/check requests refused by the decision API's own limit (429)")
        .register(registry);
  }

  @Override
  public void record(CheckRequest request, List<Status> statuses, long nanos) {
    timer.record(nanos, TimeUnit.NANOSECONDS);
    String domain = request.domain();
    String d = config.get().domains().has(domain) ? domain : "_unknown";
    for (int i = 0; i < statuses.size(); i++) {
      Status s = statuses.get(i);
      String descriptor = descriptor(s);
      if (s.node() != null && s.node().detailedMetric()) {
        descriptor = descriptor + "|" + request.descriptors().get(i).joined()
            .replace('\u001f', '|');
      }
      counter(d, descriptor, outcome(s)).increment();
    }
  }

  @Override
  public void invalid() {
    invalid.increment();
  }

  @Override
  public void limited() {
    limited.increment();
  }

  /** For tests: the count of one series, 0 when it does not exist. */
  double count(String domain, String descriptor, String outcome) {
    Counter c = counters.get(domain + '\u0000' + descriptor + '\u0000' + outcome);
    return c == null ? 0 : c.count();
  }

  private static String descriptor(Status s) {
    RlsDescriptor node = s.node();
    if (node == null) {
      return s.limit() != null || "override".equals(s.name()) ? "_override" : "_none";
    }
    return node.path();
  }

  private static String outcome(Status s) {
    if (s.degraded()) {
      return s.overLimit() ? "degraded_over_limit" : "degraded_ok";
    }
    if (s.overLimit()) {
      return "over_limit";
    }
    if (s.shadowRefused()) {
      return "shadow_over_limit";
    }
    if (s.node() != null && s.node().unlimited()) {
      return "unlimited";
    }
    return s.limit() == null ? "no_limit" : "ok";
  }

  private Counter counter(String domain, String descriptor, String outcome) {
    String key = domain + '\u0000' + descriptor + '\u0000' + outcome;
    Counter c = counters.get(key);
    if (c != null) {
      return c;
    }
    if (counters.size() >= MAX_SERIES) {
      return counters.computeIfAbsent(domain + "\u0000_other\u0000" + outcome,
          k -> build(domain, "_other", outcome));
    }
    return counters.computeIfAbsent(key, k -> build(domain, descriptor, outcome));
  }

  private Counter build(String domain, String descriptor, String outcome) {
    return Counter.builder("sluice_rls_decisions").description(
        "Rate limit service descriptors answered, by domain, descriptor and outcome")
        .tag("domain", domain).tag("descriptor", descriptor).tag("outcome", outcome)
        .register(registry);
  }
}
