package dev.sluice.micrometer;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Sluice's meters, fed as a {@link DecisionListener} (the servlet filter, the Spring Boot
 * starter, the gateway):
 *
 * <ul>
 *   <li>{@code sluice.decisions} (rule, outcome: allowed, refused, shadow_refused, degraded):
 *       every evaluated rule of a request, not only the one that decided, so a global backstop's
 *       spent quota shows; rules that are off are not counted
 *   <li>{@code sluice.shadow.refusals} (rule), {@code sluice.bans} (rule),
 *       {@code sluice.decision.errors} (rule; {@code _none} before any rule was selected)
 *   <li>{@code sluice.challenges} (rule, outcome: issued, solved, failed, replayed, refused,
 *       cleared, spent): the steps of rules whose action is {@code challenge}
 *   <li>{@code sluice.store.errors}: decisions the store could not answer
 *   <li>{@code sluice.decision.latency}: a timer with a percentiles histogram
 * </ul>
 *
 * <p>Label values are rule names from the policy, at most {@value #MAX_RULES} distinct (then
 * {@code _other}), never keys or addresses: a client chooses those and could grow the series
 * without bound. Counters are looked up once per rule and kept, so counting takes no lock.
 */
public final class SluiceMetrics implements DecisionListener {

  static final int MAX_RULES = 256;
  static final String OTHER = "_other";
  static final String NO_RULE = "_none";
  private static final String[] OUTCOMES = {"allowed", "refused", "shadow_refused", "degraded"};
  private static final int ALLOWED = 0;
  private static final int REFUSED = 1;
  private static final int SHADOW_REFUSED = 2;
  private static final int DEGRADED = 3;

  private final MeterRegistry registry;
  private final Map<String, Counter[]> decisions = new ConcurrentHashMap<>();
  private final Map<String, Counter> shadow = new ConcurrentHashMap<>();
  private final Map<String, Counter> bans = new ConcurrentHashMap<>();
  private final Map<String, Counter> errors = new ConcurrentHashMap<>();
  /** By status (0 for one outside 100..599): read on every generated answer, without boxing. */
  private final Counter[] generated = new Counter[600];
  /** By rule (bounded as everywhere here), one counter per step, made on the rule's first. */
  private final Map<String, Counter[]> challenges = new ConcurrentHashMap<>();
  private final Counter storeErrors;
  private final Timer latency;

  /** Meters registered in {@code registry}. */
  public SluiceMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.storeErrors = Counter.builder("sluice.store.errors")
        .description("Decisions the store could not answer (each rule's onStoreError decided).")
        .register(registry);
    this.latency = Timer.builder("sluice.decision.latency")
        .description("Time from asking the store to its decision.")
        .publishPercentileHistogram()
        .register(registry);
  }

  /** Makes the rules' series appear with zero counts before their first decision. */
  public SluiceMetrics registerRules(Collection<String> rules) {
    rules.forEach(this::series);
    return this;
  }

  @Override
  public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
    if (nanos >= 0) {
      latency.record(nanos, TimeUnit.NANOSECONDS);
    }
    decision(rules, d);
  }

  /** Counts a decision over {@code rules}, the list {@link Decision#refusedBy(int)} indexes. */
  public void decision(List<Rule> rules, Decision d) {
    if (d.degraded()) {
      storeErrors.increment();
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
        shadowRefusal(rule.name());
      }
    }
    if (d.banApplied() && d.rule() != null) {
      ban(d.rule());
    }
  }

  /** A decision of one rule (a WebSocket action), counted under the rule that decided. */
  public void decision(Decision d) {
    String rule;
    int outcome;
    if (d.degraded()) {
      rule = d.rule();
      outcome = DEGRADED;
      storeErrors.increment();
    } else if (!d.allowed()) {
      rule = d.rule();
      outcome = REFUSED;
    } else if (d.shadowRefused()) {
      rule = d.shadowRule();
      outcome = SHADOW_REFUSED;
      if (rule != null) {
        shadowRefusal(rule);
      }
    } else {
      rule = d.rule();
      outcome = ALLOWED;
    }
    if (rule == null) {
      return;
    }
    series(rule)[outcome].increment();
    if (d.banApplied()) {
      ban(rule);
    }
  }

  /** Counts a shadow refusal of {@code rule}. */
  private void shadowRefusal(String rule) {
    counter(shadow, "sluice.shadow.refusals", "Would-be refusals of rules in shadow mode.",
        label(rule)).increment();
  }

  private void ban(String rule) {
    counter(bans, "sluice.bans", "Bans applied, by rule.", label(rule)).increment();
  }

  @Override
  public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
    boolean any = false;
    for (Rule rule : rules) {
      if (rule.mode() != Mode.OFF) {
        failed(rule.name());
        any = true;
      }
    }
    if (!any) {
      failed(NO_RULE);
    }
  }

  private void failed(String rule) {
    counter(errors, "sluice.decision.errors",
        "Decisions that threw (bugs; each rule's onStoreError decided), by rule.", label(rule))
        .increment();
  }

  @Override
  public void generated(int status) {
    int s = status >= 100 && status <= 599 ? status : 0;
    Counter c = generated[s];
    if (c == null) {
      c = Counter.builder("sluice.generated.responses")
          .description("Responses Sluice generated itself (429, 503...), by status.")
          .tag("status", s == 0 ? "other" : Integer.toString(s)).register(registry);
      generated[s] = c;   // the registry returns the one counter of a name and tags
    }
    c.increment();
  }

  private static final String[] CHALLENGE_STEPS =
      {"issued", "solved", "failed", "replayed", "refused", "cleared", "spent"};

  private static int challengeStep(String step) {
    return switch (step) {
      case "issued" -> 0;
      case "solved" -> 1;
      case "failed" -> 2;
      case "replayed" -> 3;
      case "refused" -> 4;
      case "cleared" -> 5;
      case "spent" -> 6;
      default -> -1;
    };
  }

  /** A flood of challenged requests counts each one: a lookup and an increment, no string. */
  @Override
  public void challenge(String rule, String step) {
    int i = challengeStep(step);
    if (i < 0) {
      return;
    }
    Counter[] c = challenges.get(rule);
    if (c == null) {
      c = challenges.computeIfAbsent(label(rule), r -> {
        Counter[] a = new Counter[CHALLENGE_STEPS.length];
        for (int j = 0; j < a.length; j++) {
          a[j] = Counter.builder("sluice.challenges")
              .description("Steps of challenging rules: pages issued, answers solved, failed "
                  + "(wrong) and replayed (spent nonce), refused (the challenge's own limit), "
                  + "cleared (a clearance let a request past the rule), spent (a clearance "
                  + "whose budget was used up).")
              .tag("rule", r).tag("outcome", CHALLENGE_STEPS[j]).register(registry);
        }
        return a;
      });
    }
    c[i].increment();
  }

  /** The count of challenge {@code step}s of {@code rule}. */
  public long challenges(String rule, String step) {
    Counter[] c = challenges.get(rule);
    int i = challengeStep(step);
    return c == null || i < 0 ? 0 : (long) c[i].count();
  }

  /** The count of {@code outcome} decisions for {@code rule} (or {@code _other}). */
  public long decisions(String rule, String outcome) {
    Counter[] s = decisions.get(rule);
    for (int i = 0; i < OUTCOMES.length; i++) {
      if (OUTCOMES[i].equals(outcome)) {
        return s == null ? 0 : (long) s[i].count();
      }
    }
    throw new IllegalArgumentException("outcome : " + outcome
        + " (expected: allowed, refused, shadow_refused or degraded)");
  }

  /** Shadow refusals counted for {@code rule}. */
  public long shadowRefusals(String rule) {
    Counter c = shadow.get(rule);
    return c == null ? 0 : (long) c.count();
  }

  public long storeErrors() {
    return (long) storeErrors.count();
  }

  private String label(String rule) {
    return decisions.containsKey(rule) || decisions.size() < MAX_RULES ? rule : OTHER;
  }

  private Counter[] series(String rule) {
    Counter[] s = decisions.get(rule);
    if (s != null) {
      return s;
    }
    return decisions.computeIfAbsent(label(rule), k -> {
      Counter[] a = new Counter[OUTCOMES.length];
      for (int i = 0; i < a.length; i++) {
        a[i] = Counter.builder("sluice.decisions")
            .description("Rate-limit decisions by evaluated rule and outcome.")
            .tag("rule", k).tag("outcome", OUTCOMES[i]).register(registry);
      }
      return a;
    });
  }

  private Counter counter(Map<String, Counter> map, String name, String help, String rule) {
    Counter c = map.get(rule);
    return c != null ? c : map.computeIfAbsent(rule, k -> Counter.builder(name).description(help).tag("rule", k)
        .register(registry));
  }
}
