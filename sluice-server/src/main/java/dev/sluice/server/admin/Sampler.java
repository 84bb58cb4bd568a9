package dev.sluice.server.admin;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Reads the decision counters the gateway already keeps ({@link Metrics}: the Micrometer
 * counters behind {@code sluice_decisions_total} and {@code sluice_delayed_total}) and turns them
 * into counts since the previous read. Called once a second by the console's thread: the
 * request path does nothing for the console, not even a volatile write.
 */
final class Sampler {

  /** Rule names a policy may have, and more: past this the baselines start over. */
  private static final int MAX_BASELINES = 4096;

  private final Metrics metrics;
  private final Supplier<? extends Collection<String>> rules;
  private final Map<String, long[]> last = new HashMap<>();
  private boolean started;

  Sampler(Metrics metrics, Supplier<? extends Collection<String>> rules) {
    this.metrics = metrics;
    this.rules = rules;
  }

  /**
   * The counts of each rule of the running policy since the previous call, one per
   * {@link Timeline#OUTCOMES}; the first call only takes the baseline and returns none.
   */
  synchronized Map<String, long[]> sample() {
    if (last.size() > MAX_BASELINES) {
      last.clear();
      started = false;
    }
    Map<String, long[]> deltas = new LinkedHashMap<>();
    for (String rule : rules.get()) {
      long[] now = read(rule);
      long[] before = last.put(rule, now);
      if (before == null) {
        if (!started) {
          continue;
        }
        // A rule a reload added: its counters were registered at zero.
        before = new long[Timeline.OUTCOME_COUNT];
      }
      long[] d = new long[Timeline.OUTCOME_COUNT];
      for (int i = 0; i < d.length; i++) {
        d[i] = Math.max(0, now[i] - before[i]);
      }
      deltas.put(rule, d);
    }
    started = true;
    return deltas;
  }

  private long[] read(String rule) {
    long[] c = new long[Timeline.OUTCOME_COUNT];
    for (int i = 0; i < 4; i++) {
      c[i] = metrics.decisions(rule, Timeline.OUTCOMES.get(i));
    }
    c[4] = metrics.delayedCount(rule);
    return c;
  }
}
