package dev.sluice.server.admin;

import dev.sluice.core.Decision;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.policy.Durations;
import dev.sluice.server.gateway.GatewayEvents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The server's counters, fed by the gateway through {@link GatewayEvents}, rendered in the
 * Prometheus text format. Label values are bounded: rule names from the policy (at most
 * {@value #MAX_LABELS} distinct, then {@code _other}), close codes and HTTP statuses; never keys
 * or addresses, which a client chooses and could use to grow the series without bound.
 *
 * <p>Counting is lock-free (one {@link LongAdder} per series) because it runs on I/O threads.
 */
public final class Metrics implements GatewayEvents {

  static final int MAX_LABELS = 256;
  static final String OTHER = "_other";
  private static final String[] OUTCOMES = {"allowed", "refused", "shadow_refused", "degraded"};
  private static final int ALLOWED = 0;
  private static final int REFUSED = 1;
  private static final int SHADOW_REFUSED = 2;
  private static final int DEGRADED = 3;
  /** The rule label of a failure before any rule was selected. */
  static final String NO_RULE = "_none";
  private static final long LOG_EVERY_NANOS = Duration.ofSeconds(10).toNanos();
  private static final long FAILURE_LOG_EVERY_NANOS = Duration.ofMinutes(1).toNanos();

  private final EventLog log;
  private final LongSupplier clock;
  private final Map<String, LongAdder[]> decisions = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> shadowRefusals = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> bans = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> closes = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> generated = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> decisionErrors = new ConcurrentHashMap<>();
  /** By "surface,reason": both come from the moderation module's enums, so the set is bounded. */
  private final Map<String, LongAdder> moderation = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lastShadowLog = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lastFailureLog = new ConcurrentHashMap<>();
  private final LongAdder storeErrors = new LongAdder();
  private final AtomicLong lastStoreErrorLog;
  private final AtomicLong lastUpstreamLog;
  private final LongAdder upstreamUnlogged = new LongAdder();
  private final LongAdder reloadsOk = new LongAdder();
  private final LongAdder reloadsFailed = new LongAdder();
  private final AtomicLong webSockets = new AtomicLong();
  private volatile LongSupplier trackedKeys = () -> 0;
  private volatile StoreHealth store = StoreHealth.memory();

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
    for (String rule : rules) {
      series(rule);
    }
  }

  /**
   * Counts every evaluated rule of the check, not only the deciding one: a global backstop spends
   * its quota on requests a route's rule decides, and showed 0 while it did.
   */
  @Override
  public void decision(String kind, List<Rule> rules, Decision d) {
    if (d.degraded()) {
      storeError(d);
    }
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (rule.mode() == Mode.OFF) {
        continue;
      }
      int outcome = d.refusedBy(i) ? (rule.mode() == Mode.SHADOW ? SHADOW_REFUSED : REFUSED)
          : d.degraded() ? DEGRADED : ALLOWED;
      series(rule.name())[outcome].increment();
      if (outcome == SHADOW_REFUSED) {
        shadowRefusal(kind, rule.name());
      }
    }
    if (d.banApplied() && d.rule() != null) {
      counter(bans, label(d.rule())).increment();
    }
  }

  /** A decision of one rule (a WebSocket action), counted under the rule that decided. */
  @Override
  public void decision(String kind, Decision d) {
    String rule;
    int outcome;
    if (d.degraded()) {
      rule = d.rule();
      outcome = DEGRADED;
      storeError(d);
    } else if (!d.allowed()) {
      rule = d.rule();
      outcome = REFUSED;
    } else if (d.shadowRefused()) {
      rule = d.shadowRule();
      outcome = SHADOW_REFUSED;
      shadowRefusal(kind, rule);
    } else {
      rule = d.rule();
      outcome = ALLOWED;
    }
    if (rule == null) {
      return;
    }
    series(rule)[outcome].increment();
    if (d.banApplied()) {
      counter(bans, label(rule)).increment();
    }
  }

  private void storeError(Decision d) {
    storeErrors.increment();
    long now = clock.getAsLong();
    long last = lastStoreErrorLog.get();
    if (now - last >= LOG_EVERY_NANOS && lastStoreErrorLog.compareAndSet(last, now)) {
      log.log("WARN", "store error; rule decided by its onStoreError", "rule", d.rule(),
          "allowed", d.allowed(), "store_errors_total", storeErrors.sum());
    }
  }

  private void shadowRefusal(String kind, String rule) {
    LongAdder count = counter(shadowRefusals, label(rule));
    count.increment();
    if (due(lastShadowLog, label(rule), LOG_EVERY_NANOS)) {
      log.log("INFO", "shadow refusal (allowed: rule is in shadow mode)", "rule", rule,
          "kind", kind, "shadow_refusals_total", count.sum());
    }
  }

  /**
   * A check that threw: a bug, counted per rule and logged with its stack trace at most once per
   * rule per minute (a broken rule fails every request it sees).
   */
  @Override
  public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
    List<String> names = new ArrayList<>(rules.size());
    boolean due = false;
    for (Rule rule : rules) {
      if (rule.mode() != Mode.OFF) {
        names.add(rule.name());
      }
    }
    if (names.isEmpty()) {
      names.add(NO_RULE);
    }
    for (String name : names) {
      counter(decisionErrors, label(name)).increment();
      due |= due(lastFailureLog, label(name), FAILURE_LOG_EVERY_NANOS);
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

  /** True, once per {@code every}, for {@code key}. */
  private boolean due(Map<String, AtomicLong> last, String key, long every) {
    long now = clock.getAsLong();
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
    counter(closes, closes.size() < 64 || closes.containsKey(label) ? label : "other").increment();
  }

  @Override
  public void generated(int status) {
    String label = status >= 100 && status <= 599 ? Integer.toString(status) : "other";
    counter(generated, label).increment();
  }

  @Override
  public void moderated(String surface, String reason) {
    counter(moderation, surface + "," + reason).increment();
  }

  /** The count of moderation checks of {@code surface} that ended in {@code reason}. */
  public long moderationChecks(String surface, String reason) {
    LongAdder a = moderation.get(surface + "," + reason);
    return a == null ? 0 : a.sum();
  }

  /** Counts a policy reload. */
  public void reload(boolean ok) {
    (ok ? reloadsOk : reloadsFailed).increment();
  }

  public long reloads(boolean ok) {
    return (ok ? reloadsOk : reloadsFailed).sum();
  }

  /** The count of {@code outcome} decisions for {@code rule}, for tests and the admin page. */
  public long decisions(String rule, String outcome) {
    LongAdder[] s = decisions.get(rule);
    for (int i = 0; i < OUTCOMES.length; i++) {
      if (OUTCOMES[i].equals(outcome)) {
        return s == null ? 0 : s[i].sum();
      }
    }
    throw new IllegalArgumentException("outcome : " + outcome
        + " (expected: allowed, refused, shadow_refused or degraded)");
  }

  private String label(String rule) {
    if (decisions.containsKey(rule) || decisions.size() < MAX_LABELS) {
      return rule;
    }
    return OTHER;
  }

  private LongAdder[] series(String rule) {
    return decisions.computeIfAbsent(label(rule), k -> {
      LongAdder[] a = new LongAdder[OUTCOMES.length];
      for (int i = 0; i < a.length; i++) {
        a[i] = new LongAdder();
      }
      return a;
    });
  }

  private static LongAdder counter(Map<String, LongAdder> map, String label) {
    return map.computeIfAbsent(label, k -> new LongAdder());
  }

  /** The Prometheus text exposition format, version 0.0.4. */
  public String render() {
    StringBuilder sb = new StringBuilder(2048);
    header(sb, "sluice_decisions_total", "counter",
        "Rate-limit decisions by evaluated rule and outcome.");
    for (Map.Entry<String, LongAdder[]> e : new TreeMap<>(decisions).entrySet()) {
      for (int i = 0; i < OUTCOMES.length; i++) {
        sb.append("sluice_decisions_total{rule=\"").append(escape(e.getKey()))
            .append("\",outcome=\"").append(OUTCOMES[i]).append("\"} ")
            .append(e.getValue()[i].sum()).append('\n');
      }
    }
    labelled(sb, "sluice_shadow_refusals_total", "Would-be refusals of rules in shadow mode.",
        "rule", shadowRefusals);
    labelled(sb, "sluice_bans_total", "Bans applied, by rule.", "rule", bans);
    labelled(sb, "sluice_decision_errors_total",
        "Decisions that threw (bugs; each rule's onStoreError decided), by rule.", "rule",
        decisionErrors);
    header(sb, "sluice_store_errors_total", "counter",
        "Decisions the store could not answer (each rule's onStoreError decided).");
    sb.append("sluice_store_errors_total ").append(storeErrors.sum()).append('\n');
    header(sb, "sluice_tracked_keys", "gauge", "Keys whose state the store holds.");
    long keys;
    try {
      keys = trackedKeys.getAsLong();
    } catch (RuntimeException e) {
      keys = -1;
    }
    sb.append("sluice_tracked_keys ").append(keys).append('\n');
    header(sb, "sluice_websocket_connections", "gauge", "Open WebSocket connections.");
    sb.append("sluice_websocket_connections ").append(webSockets.get()).append('\n');
    labelled(sb, "sluice_websocket_closes_total", "WebSocket closes by close code.", "code",
        closes);
    header(sb, "sluice_reloads_total", "counter", "Policy reloads by result.");
    sb.append("sluice_reloads_total{result=\"ok\"} ").append(reloadsOk.sum()).append('\n');
    sb.append("sluice_reloads_total{result=\"failed\"} ").append(reloadsFailed.sum())
        .append('\n');
    labelled(sb, "sluice_generated_responses_total",
        "Responses the gateway generated itself (429, 413, 502, 504...), by status.", "status",
        generated);
    renderStore(sb, store);
    header(sb, "sluice_moderation_checks_total", "counter",
        "JSON fields checked by the moderation section, by surface and reason (none: allowed).");
    for (Map.Entry<String, LongAdder> e : new TreeMap<>(moderation).entrySet()) {
      int comma = e.getKey().indexOf(',');
      sb.append("sluice_moderation_checks_total{surface=\"")
          .append(escape(e.getKey().substring(0, comma))).append("\",reason=\"")
          .append(escape(e.getKey().substring(comma + 1))).append("\"} ")
          .append(e.getValue().sum()).append('\n');
    }
    return sb.toString();
  }

  private static void renderStore(StringBuilder sb, StoreHealth s) {
    header(sb, "sluice_store_ready", "gauge",
        "1 once the store has been ready (connected, scripts loaded): what /readyz reports.");
    sb.append("sluice_store_ready ").append(s.ready() ? 1 : 0).append('\n');
    header(sb, "sluice_store_connected", "gauge", "1 while the store's connections are up.");
    sb.append("sluice_store_connected ").append(s.connected() ? 1 : 0).append('\n');
    header(sb, "sluice_store_connect_failures_total", "counter",
        "Failed connection attempts to the store, at start and while reconnecting.");
    sb.append("sluice_store_connect_failures_total ").append(s.connectFailures()).append('\n');
    header(sb, "sluice_store_circuit", "gauge",
        "The circuit in front of the store: 1 for its current state.");
    String state = s.circuit();
    for (String st : new String[] {"closed", "open", "half_open"}) {
      sb.append("sluice_store_circuit{state=\"").append(st).append("\"} ")
          .append(st.equals(state) ? 1 : 0).append('\n');
    }
    header(sb, "sluice_store_circuit_opened_total", "counter",
        "Times the circuit opened (again after failed probes too).");
    sb.append("sluice_store_circuit_opened_total ").append(s.circuitOpenings()).append('\n');
  }

  private static void labelled(StringBuilder sb, String name, String help, String label,
      Map<String, LongAdder> values) {
    header(sb, name, "counter", help);
    for (Map.Entry<String, LongAdder> e : new TreeMap<>(values).entrySet()) {
      sb.append(name).append('{').append(label).append("=\"").append(escape(e.getKey()))
          .append("\"} ").append(e.getValue().sum()).append('\n');
    }
  }

  private static void header(StringBuilder sb, String name, String type, String help) {
    sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
  }

  static String escape(String v) {
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
