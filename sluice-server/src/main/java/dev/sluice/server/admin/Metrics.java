package dev.sluice.server.admin;

import dev.sluice.core.Decision;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.gateway.AccessEntry;
import dev.sluice.gateway.GatewayEvents;
import dev.sluice.micrometer.SluiceMetrics;
import dev.sluice.policy.Durations;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The server's meters, fed by the gateway through {@link GatewayEvents}, in a Micrometer
 * {@link PrometheusMeterRegistry} whose scrape is {@code /metrics}. The rate-limiting meters are
 * {@code sluice-micrometer}'s, the ones the servlet filter and the Spring Boot starter report
 * too; the gateway's own (WebSockets, reloads, the store's health, moderation) are added here.
 * Label values are bounded: rule names from the policy (at most 256, then {@code _other}), close
 * codes, statuses; never keys or addresses.
 *
 * <p>This class also writes the throttled logs of bans, shadow refusals, store errors, failed
 * decisions and upstream failures.
 */
public final class Metrics implements GatewayEvents {

  static final int MAX_LABELS = 256;
  /** The rule label of a failure before any rule was selected. */
  static final String NO_RULE = "_none";
  private static final long LOG_EVERY_NANOS = Duration.ofSeconds(10).toNanos();
  private static final long FAILURE_LOG_EVERY_NANOS = Duration.ofMinutes(1).toNanos();

  private final EventLog log;
  private final LongSupplier clock;
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final SluiceMetrics meters = new SluiceMetrics(registry);
  private final Map<String, Counter> closes = new ConcurrentHashMap<>();
  /** By kind (http, ws-connect): bounded. */
  private final Map<String, Counter> allowlisted = new ConcurrentHashMap<>();
  /** By rule name: bounded by the policy, past {@link #MAX_LABELS} counted as _other. */
  private final Map<String, Counter> delayed = new ConcurrentHashMap<>();
  /** By "surface,reason": both come from the moderation module's enums, so the set is bounded. */
  private final Map<String, Counter> moderation = new ConcurrentHashMap<>();
  /** By kind (http, ws-connect). */
  private final Map<String, Counter> denied = new ConcurrentHashMap<>();
  /** By "check,result": check names from the policy, results from a fixed set. */
  private final Map<String, Counter> humanChecks = new ConcurrentHashMap<>();
  /** By "rule,result" (counted, skipped, reset). */
  private final Map<String, Counter> counted = new ConcurrentHashMap<>();
  /** Per route (null: {@code _none}), one counter per verdict, made on the route's first. */
  private final Map<String, Counter[]> verdicts = new ConcurrentHashMap<>();
  /** Concurrency leases this instance holds, by rule. */
  private final Map<String, AtomicLong> inFlight = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lastHumanCheckLog = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lastShadowLog = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lastFailureLog = new ConcurrentHashMap<>();
  private final AtomicLong lastStoreErrorLog;
  private final AtomicLong lastUpstreamLog;
  private final LongAdder upstreamUnlogged = new LongAdder();
  private final Counter reloadsOk;
  private final Counter reloadsFailed;
  private final AtomicLong webSockets = new AtomicLong();
  private volatile LongSupplier trackedKeys = () -> 0;
  private volatile StoreHealth store = StoreHealth.memory();
  private volatile java.util.function.Consumer<AccessEntry> accessLog = e -> {};

  /** Where the metrics write their structured lines (bans, shadow refusals, store errors). */
  @FunctionalInterface
  public interface EventLog {
    void log(String level, String message, Object... fields);
  }

  public Metrics(EventLog log) {
    this(log, System::nanoTime);
  }

  /** Metrics whose log throttles read {@code clock} (nanoseconds, as {@link System#nanoTime}). */
  public Metrics(EventLog log, LongSupplier clock) {
    this.log = log;
    this.clock = clock;
    long past = clock.getAsLong() - LOG_EVERY_NANOS;
    this.lastStoreErrorLog = new AtomicLong(past);
    this.lastUpstreamLog = new AtomicLong(past);
    Gauge.builder("sluice.tracked.keys", this, m -> {
      try {
        return m.trackedKeys.getAsLong();
      } catch (RuntimeException e) {
        return -1;
      }
    }).description("Keys whose state the store holds.").register(registry);
    Gauge.builder("sluice.websocket.connections", webSockets, AtomicLong::get)
        .description("Open WebSocket connections.").register(registry);
    String reloads = "Policy reloads by result.";
    reloadsOk = Counter.builder("sluice.reloads").description(reloads).tag("result", "ok")
        .register(registry);
    reloadsFailed = Counter.builder("sluice.reloads").description(reloads)
        .tag("result", "failed").register(registry);
    Gauge.builder("sluice.store.ready", this, m -> m.store.ready() ? 1 : 0)
        .description("1 once the store has been ready (connected, scripts loaded): what /readyz "
            + "reports.").register(registry);
    Gauge.builder("sluice.store.connected", this, m -> m.store.connected() ? 1 : 0)
        .description("1 while the store's connections are up.").register(registry);
    // A counter the store keeps: Micrometer's function counter reads it at each scrape.
    io.micrometer.core.instrument.FunctionCounter.builder("sluice.store.connect.failures", this,
        m -> m.store.connectFailures())
        .description("Failed connection attempts to the store, at start and while reconnecting.")
        .register(registry);
    for (String state : new String[] {"closed", "open", "half_open"}) {
      Gauge.builder("sluice.store.circuit", this, m -> state.equals(m.store.circuit()) ? 1 : 0)
          .description("The circuit in front of the store: 1 for its current state.")
          .tag("state", state).register(registry);
    }
    io.micrometer.core.instrument.FunctionCounter.builder("sluice.store.circuit.opened", this,
        m -> m.store.circuitOpenings())
        .description("Times the circuit opened (again after failed probes too).")
        .register(registry);
  }

  /**
   * Sends finished exchanges to {@code sink} (the access log) and exposes its drops as
   * {@code sluice_access_log_dropped_total}.
   */
  public void accessLog(java.util.function.Consumer<AccessEntry> sink, LongSupplier dropped) {
    this.accessLog = sink;
    io.micrometer.core.instrument.FunctionCounter.builder("sluice.access.log.dropped", dropped,
        LongSupplier::getAsLong)
        .description("Access log lines dropped because the writer fell behind (a full queue) or "
            + "could not write.").register(registry);
  }

  @Override
  public void exchange(AccessEntry entry) {
    accessLog.accept(entry);
  }

  /** The number of keys the store holds, read at every scrape. */
  public void trackedKeys(LongSupplier supplier) {
    this.trackedKeys = supplier;
  }

  /** The store's readiness, connection and circuit, read at every scrape. */
  public void store(StoreHealth health) {
    this.store = health;
  }

  /** Makes the policy's rules appear with zero counts before their first decision. */
  public void registerRules(Collection<String> rules) {
    meters.registerRules(rules);
  }

  /**
   * Counts every evaluated rule of the check, not only the deciding one: a global backstop spends
   * its quota on requests a route's rule decides, and showed 0 while it did.
   */
  @Override
  public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
    meters.decision(kind, rules, d, nanos);
    if (d.degraded()) {
      storeErrorLog(d);
    }
  }

  private void storeErrorLog(Decision d) {
    long now = clock.getAsLong();
    long last = lastStoreErrorLog.get();
    if (now - last >= LOG_EVERY_NANOS && lastStoreErrorLog.compareAndSet(last, now)) {
      log.log("WARN", "store error; rule decided by its onStoreError", "rule", d.rule(),
          "allowed", d.allowed(), "store_errors_total", meters.storeErrors());
    }
  }

  /**
   * A dry run's refusal, logged with the key it would have refused (so a first deployment tells
   * whom it would have stopped), at most once per 10 s per rule, like the other warnings.
   */
  @Override
  public void shadowRefused(String kind, Rule rule, String key) {
    if (due(lastShadowLog, rule.name(), LOG_EVERY_NANOS)) {
      log.log("INFO", "shadow refusal (allowed: rule is in shadow mode)", "rule", rule.name(),
          "key", key, "kind", kind, "shadow_refusals_total", meters.shadowRefusals(rule.name()));
    }
  }

  /**
   * A check that threw: a bug, counted per rule and logged with its stack trace at most once per
   * rule per minute (a broken rule fails every request it sees).
   */
  @Override
  public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
    meters.decisionFailed(kind, rules, error);
    List<String> names = new ArrayList<>(rules.size());
    for (Rule rule : rules) {
      if (rule.mode() != Mode.OFF) {
        names.add(rule.name());
      }
    }
    if (names.isEmpty()) {
      names.add(NO_RULE);
    }
    boolean due = false;
    for (String name : names) {
      due |= due(lastFailureLog, name, FAILURE_LOG_EVERY_NANOS);
    }
    if (due) {
      log.log("ERROR", "rate limit decision failed (a bug; each rule's onStoreError decided)",
          "kind", kind, "rules", String.join(",", names), "error", error);
    }
  }

  /** Logs an upstream failure at most once per 10 s, with how many went unlogged before it. */
  @Override
  public void upstreamFailed(int status, String upstream, String cause) {
    long now = clock.getAsLong();
    long last = lastUpstreamLog.get();
    if (now - last >= LOG_EVERY_NANOS && lastUpstreamLog.compareAndSet(last, now)) {
      log.log("WARN", "upstream failed", "status", status, "upstream", upstream, "cause", cause,
          "unlogged_before", upstreamUnlogged.sumThenReset());
    } else {
      upstreamUnlogged.increment();
    }
  }

  /** True, once per {@code every}, for {@code key}; at most 1,024 keys are remembered. */
  private boolean due(Map<String, AtomicLong> last, String key, long every) {
    long now = clock.getAsLong();
    if (last.size() > 1024 && !last.containsKey(key)) {
      last.clear();
    }
    AtomicLong seen = last.computeIfAbsent(key, k -> new AtomicLong(now - every));
    long then = seen.get();
    return now - then >= every && seen.compareAndSet(then, now);
  }

  /**
   * Logs a ban once, when applied, with its key (seed 003: key, score, maxScore, length). The
   * key is logged, never used as a label.
   */
  @Override
  public void banApplied(String kind, Decision d, String key) {
    String length = Durations.format(Duration.ofMillis(d.retryAfterMillis()));
    if (Double.isNaN(d.currentScore())) {
      log.log("WARN", "ban applied", "rule", d.rule(), "key", key, "limit", d.limitName(),
          "length", length, "kind", kind);
    } else {
      log.log("WARN", "ban applied", "rule", d.rule(), "key", key, "limit", d.limitName(),
          "score", d.currentScore(), "maxScore", d.maxScore(), "length", length, "kind", kind);
    }
  }

  @Override
  public void webSocketOpened() {
    webSockets.incrementAndGet();
  }

  @Override
  public void webSocketClosed(int code) {
    webSockets.decrementAndGet();
    String label = (code >= 1000 && code <= 1015) || (code >= 3000 && code <= 4999)
        ? Integer.toString(code) : "other";
    String l = closes.size() < 64 || closes.containsKey(label) ? label : "other";
    closes.computeIfAbsent(l, k -> Counter.builder("sluice.websocket.closes")
        .description("WebSocket closes by close code.").tag("code", k).register(registry))
        .increment();
  }

  @Override
  public void allowlisted(String kind) {
    allowlisted.computeIfAbsent(kind, k -> Counter.builder("sluice.allowlisted")
        .description("Requests never limited because their client is on the allow list.")
        .tag("kind", k).register(registry)).increment();
  }

  /** Requests of {@code kind} that skipped every rule by the allow list. */
  public long allowlistedCount(String kind) {
    Counter c = allowlisted.get(kind);
    return c == null ? 0 : (long) c.count();
  }

  @Override
  public void delayed(String kind, String rule) {
    String l = delayed.size() < MAX_LABELS || delayed.containsKey(rule) ? rule : "_other";
    delayed.computeIfAbsent(l, k -> Counter.builder("sluice.delayed")
        .description("Requests a rule refused that waited for their token (the rule's delay); "
            + "the decision after the wait is counted in sluice_decisions_total.")
        .tag("rule", k).register(registry)).increment();
  }

  @Override
  public void denied(String kind) {
    denied.computeIfAbsent(kind, k -> Counter.builder("sluice.denied")
        .description("Requests answered 403 because their client is on the deny list; never "
            + "forwarded.").tag("kind", k).register(registry)).increment();
  }

  /** Requests of {@code kind} denied by the deny list. */
  public long deniedCount(String kind) {
    Counter c = denied.get(kind);
    return c == null ? 0 : (long) c.count();
  }

  /**
   * A human check's result, counted; a verifier that could not answer is logged at most once per
   * 10 s per check, with what happened (never the token).
   */
  @Override
  public void humanCheck(String check, String result, String detail) {
    String c = humanChecks.size() < MAX_LABELS * 6 || humanChecks.containsKey(check + "," + result)
        ? check : "_other";
    humanChecks.computeIfAbsent(c + "," + result, k -> Counter.builder("sluice.human.checks")
        .description("Human checks (Turnstile, hCaptcha, reCAPTCHA) by check and result: passed, "
            + "failed, replayed, missing (no token), error (the verifier or the store could not "
            + "answer).").tag("check", c).tag("result", result).register(registry)).increment();
    if (result.equals("error") && due(lastHumanCheckLog, check, LOG_EVERY_NANOS)) {
      log.log("WARN", "human check could not be verified", "check", check, "cause", detail,
          "errors_total", humanChecks(check, "error"));
    }
  }

  /** Human checks of {@code check} that ended in {@code result}. */
  public long humanChecks(String check, String result) {
    Counter c = humanChecks.get(check + "," + result);
    return c == null ? 0 : (long) c.count();
  }

  @Override
  public void responseCounted(String rule, int status, String result) {
    String r = counted.size() < MAX_LABELS * 3 || counted.containsKey(rule + "," + result) ? rule
        : "_other";
    counted.computeIfAbsent(r + "," + result, k -> Counter.builder("sluice.counted.responses")
        .description("Responses seen by rules counted on responses (countStatus, cooldowns), by "
            + "rule and result: counted (spent), skipped (a status the rule does not count), "
            + "reset (a cooldown's success).").tag("rule", r).tag("result", result)
        .register(registry)).increment();
  }

  /** Responses {@code rule} saw with {@code result} (counted, skipped, reset). */
  public long countedResponses(String rule, String result) {
    Counter c = counted.get(rule + "," + result);
    return c == null ? 0 : (long) c.count();
  }

  @Override
  public void inFlight(String rule, int delta) {
    AtomicLong n = inFlight.get(rule);
    if (n == null) {
      String r = inFlight.size() < MAX_LABELS ? rule : "_other";
      n = inFlight.computeIfAbsent(r, k -> {
        AtomicLong v = new AtomicLong();
        Gauge.builder("sluice.in.flight", v, AtomicLong::get)
            .description("Requests in flight holding a lease of a concurrency rule, on this "
                + "instance.").tag("rule", k).register(registry);
        return v;
      });
    }
    n.addAndGet(delta);
  }

  /** Leases of {@code rule} this instance holds now. */
  public long inFlight(String rule) {
    AtomicLong n = inFlight.get(rule);
    return n == null ? 0 : n.get();
  }

  /** Decisions the store could not answer, since start. */
  public long storeErrors() {
    return meters.storeErrors();
  }

  /** Requests {@code rule} made wait for their token (its {@code delay}), for the console. */
  public long delayedCount(String rule) {
    Counter c = delayed.get(rule);
    return c == null ? 0 : (long) c.count();
  }

  @Override
  public void challenge(String rule, String step) {
    meters.challenge(rule, step);
  }

  /** Challenge {@code step}s of {@code rule} (issued, solved, failed, replayed...). */
  public long challenges(String rule, String step) {
    return meters.challenges(rule, step);
  }

  @Override
  public void generated(int status) {
    meters.generated(status);
  }

  private static final String NO_ROUTE = "_none";

  /** One request's verdict: a map lookup and an increment, no string built. */
  @Override
  public void verdict(String route, dev.sluice.core.policy.RequestVerdict verdict) {
    String r = route == null ? NO_ROUTE : route;
    Counter[] c = verdicts.get(r);
    if (c == null) {
      c = verdicts.computeIfAbsent(r, k -> {
        dev.sluice.core.policy.RequestVerdict[] all = dev.sluice.core.policy.RequestVerdict
            .values();
        Counter[] a = new Counter[all.length];
        for (int i = 0; i < all.length; i++) {
          a[i] = Counter.builder("sluice.requests")
              .description("Requests by route (_none: no route matched) and verdict, once each "
                  + "at its end, whatever its protocol: the access log's outcome.")
              .tag("route", k).tag("verdict", all[i].label()).register(registry);
        }
        return a;
      });
    }
    c[verdict.ordinal()].increment();
  }

  /** The count of requests of {@code route} (null: none) that ended with {@code verdict}. */
  public long requests(String route, dev.sluice.core.policy.RequestVerdict verdict) {
    Counter[] c = verdicts.get(route == null ? NO_ROUTE : route);
    return c == null ? 0 : (long) c[verdict.ordinal()].count();
  }

  @Override
  public void moderated(String surface, String reason) {
    moderation.computeIfAbsent(surface + "," + reason, k -> Counter
        .builder("sluice.moderation.checks")
        .description("JSON fields checked by the moderation section, by surface and reason "
            + "(none: allowed).")
        .tag("surface", surface).tag("reason", reason).register(registry)).increment();
  }

  /** The count of moderation checks of {@code surface} that ended in {@code reason}. */
  public long moderationChecks(String surface, String reason) {
    Counter c = moderation.get(surface + "," + reason);
    return c == null ? 0 : (long) c.count();
  }

  /** Counts a policy reload. */
  public void reload(boolean ok) {
    (ok ? reloadsOk : reloadsFailed).increment();
  }

  public long reloads(boolean ok) {
    return (long) (ok ? reloadsOk : reloadsFailed).count();
  }

  /** The count of {@code outcome} decisions for {@code rule}, for tests and the admin page. */
  public long decisions(String rule, String outcome) {
    return meters.decisions(rule, outcome);
  }

  /** The registry behind {@code /metrics}. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition format, version 0.0.4. */
  public String render() {
    return registry.scrape();
  }

  // ------------------------------------------------------------------ the admin listener

  private final Map<String, Counter> adminRefused = new ConcurrentHashMap<>();
  private final Map<String, Counter> adminClosed = new ConcurrentHashMap<>();

  /**
   * Counts an admin request its door refused ({@code host}, {@code cross-site}, {@code token})
   * or the listener could not take ({@code busy}, {@code malformed}).
   */
  void adminRefused(String reason) {
    adminRefused.computeIfAbsent(reason, k -> Counter.builder("sluice.admin.refused")
        .description("Admin requests refused before any endpoint: a foreign Host, another "
            + "site, no token, a full queue, a malformed request.")
        .tag("reason", k).register(registry)).increment();
  }

  long adminRefusedCount(String reason) {
    Counter c = adminRefused.get(reason);
    return c == null ? 0 : (long) c.count();
  }

  /**
   * Counts an admin connection the listener closed: {@code head-timeout}, {@code body-timeout},
   * {@code idle-timeout}, {@code cap} (the oldest waiting one, for a new one) or {@code full}
   * (a new one, when none was waiting).
   */
  void adminClosed(String reason) {
    adminClosed.computeIfAbsent(reason, k -> Counter.builder("sluice.admin.connections.closed")
        .description("Admin connections the listener closed: timeouts and the connection cap.")
        .tag("reason", k).register(registry)).increment();
  }

  long adminClosedCount(String reason) {
    Counter c = adminClosed.get(reason);
    return c == null ? 0 : (long) c.count();
  }
}
