package dev.sluice.server.admin;

import java.util.AbstractList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decisions per rule and outcome over time, for the console's charts: the last 15 minutes at
 * 1 s and the last 24 hours at 1 min, in fixed rings written by the {@link Sampler} once a
 * second.
 *
 * <p>Memory is fixed per rule: {@value #OUTCOME_COUNT} outcomes x ({@value #SECONDS} +
 * {@value #MINUTES}) ints = 46,800 bytes, allocated when a rule first decides something, for at
 * most {@value #MAX_RULES} rules (past that, rules count together as {@value #OTHER}): at most
 * 3.0 MB, whatever the traffic or the number of keys. An int holds a minute of 35 million
 * decisions a second; past that a slot stays at {@link Integer#MAX_VALUE}.
 *
 * <p>Each slot is stamped with the second (or minute) it holds, shared by every rule, so a slot
 * whose stamp is old reads as zero: a sampler that missed seconds (a paused process) leaves
 * zeros there, never counts from 15 minutes earlier.
 */
final class Timeline {

  /** The outcomes, in the order of every array here and in the console's JSON. */
  static final List<String> OUTCOMES =
      List.of("allowed", "refused", "shadow_refused", "degraded", "delayed");
  static final int OUTCOME_COUNT = 5;
  static final int SECONDS = 900;
  static final int MINUTES = 1440;
  static final int MAX_RULES = 64;
  static final String OTHER = "_other";

  /** One resolution: a ring of {@code slots} slots of {@code stepSeconds} each. */
  enum Resolution {
    SECOND("1s", 1, SECONDS), MINUTE("1m", 60, MINUTES);

    final String label;
    final int stepSeconds;
    final int slots;

    Resolution(String label, int stepSeconds, int slots) {
      this.label = label;
      this.stepSeconds = stepSeconds;
      this.slots = slots;
    }

    /** {@code 1s} or {@code 1m}, or null. */
    static Resolution of(String label) {
      for (Resolution r : values()) {
        if (r.label.equals(label)) {
          return r;
        }
      }
      return null;
    }
  }

  /** A rule's counts: [resolution][outcome][slot]. */
  private static final class Series {
    final int[][][] counts = new int[2][OUTCOME_COUNT][];

    Series() {
      for (Resolution r : Resolution.values()) {
        for (int o = 0; o < OUTCOME_COUNT; o++) {
          counts[r.ordinal()][o] = new int[r.slots];
        }
      }
    }

    boolean empty(long[][] stamps, long now) {
      for (Resolution r : Resolution.values()) {
        long last = now / r.stepSeconds;
        for (int o = 0; o < OUTCOME_COUNT; o++) {
          int[] a = counts[r.ordinal()][o];
          for (int i = 0; i < a.length; i++) {
            long stamp = stamps[r.ordinal()][i];
            if (a[i] != 0 && stamp > last - r.slots && stamp <= last) {
              return false;
            }
          }
        }
      }
      return true;
    }
  }

  private final long[][] stamps = new long[2][];
  private final Map<String, Series> rules = new LinkedHashMap<>();
  private long latest = Long.MIN_VALUE;

  Timeline() {
    for (Resolution r : Resolution.values()) {
      stamps[r.ordinal()] = new long[r.slots];
      java.util.Arrays.fill(stamps[r.ordinal()], Long.MIN_VALUE);
    }
  }

  /**
   * Adds {@code deltas} (per rule, one count per outcome) to the second {@code epochSecond} and
   * its minute. Rules whose counts are all zero take no memory.
   */
  synchronized void add(long epochSecond, Map<String, long[]> deltas) {
    latest = Math.max(latest, epochSecond);
    for (Resolution r : Resolution.values()) {
      long unit = Math.floorDiv(epochSecond, r.stepSeconds);
      int slot = (int) Math.floorMod(unit, r.slots);
      if (stamps[r.ordinal()][slot] != unit) {
        stamps[r.ordinal()][slot] = unit;
        for (Series s : rules.values()) {
          for (int o = 0; o < OUTCOME_COUNT; o++) {
            s.counts[r.ordinal()][o][slot] = 0;
          }
        }
      }
    }
    for (Map.Entry<String, long[]> e : deltas.entrySet()) {
      long[] d = e.getValue();
      boolean any = false;
      for (long v : d) {
        any |= v > 0;
      }
      if (!any) {
        continue;
      }
      Series s = series(e.getKey());
      for (Resolution r : Resolution.values()) {
        int slot = (int) Math.floorMod(Math.floorDiv(epochSecond, r.stepSeconds), r.slots);
        for (int o = 0; o < OUTCOME_COUNT && o < d.length; o++) {
          int[] a = s.counts[r.ordinal()][o];
          a[slot] = (int) Math.min(Integer.MAX_VALUE, a[slot] + Math.max(0, d[o]));
        }
      }
    }
  }

  private Series series(String rule) {
    Series s = rules.get(rule);
    if (s != null) {
      return s;
    }
    String name = rules.size() < MAX_RULES ? rule : OTHER;
    return rules.computeIfAbsent(name, k -> new Series());
  }

  /** Forgets rules with nothing in either ring (a rule removed by a reload, 24 h later). */
  synchronized void dropEmpty() {
    if (latest == Long.MIN_VALUE) {
      return;
    }
    Iterator<Series> it = rules.values().iterator();
    while (it.hasNext()) {
      if (it.next().empty(stamps, latest)) {
        it.remove();
      }
    }
  }

  /** The rules that hold counts, in the order they first counted. */
  synchronized List<String> rules() {
    return List.copyOf(rules.keySet());
  }

  /**
   * The ring of {@code resolution} ending at {@code epochSecond}'s slot, oldest first, as JSON
   * values: {@code start} (epoch ms of the first slot), {@code stepMs}, the outcomes, and per
   * rule one array per outcome.
   */
  synchronized Map<String, Object> json(Resolution resolution, long epochSecond) {
    int n = resolution.slots;
    long last = Math.floorDiv(epochSecond, resolution.stepSeconds);
    long first = last - n + 1;
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("resolution", resolution.label);
    out.put("start", first * resolution.stepSeconds * 1000L);
    out.put("stepMs", resolution.stepSeconds * 1000L);
    out.put("points", n);
    out.put("outcomes", OUTCOMES);
    Map<String, Object> byRule = new LinkedHashMap<>();
    long[] stamp = stamps[resolution.ordinal()];
    for (Map.Entry<String, Series> e : rules.entrySet()) {
      Map<String, Object> outcomes = new LinkedHashMap<>();
      for (int o = 0; o < OUTCOME_COUNT; o++) {
        int[] ring = e.getValue().counts[resolution.ordinal()][o];
        int[] ordered = new int[n];
        for (int i = 0; i < n; i++) {
          long unit = first + i;
          int slot = (int) Math.floorMod(unit, n);
          ordered[i] = stamp[slot] == unit ? ring[slot] : 0;
        }
        outcomes.put(OUTCOMES.get(o), ints(ordered));
      }
      byRule.put(e.getKey(), outcomes);
    }
    out.put("rules", byRule);
    return out;
  }

  /** The count of {@code outcome} for {@code rule} in the second {@code epochSecond}. */
  synchronized long at(String rule, String outcome, long epochSecond) {
    Series s = rules.get(rule);
    int slot = (int) Math.floorMod(epochSecond, SECONDS);
    if (s == null || stamps[0][slot] != epochSecond) {
      return 0;
    }
    return s.counts[0][OUTCOMES.indexOf(outcome)][slot];
  }

  /** A list view of {@code a}, for the JSON writer. */
  static List<Integer> ints(int[] a) {
    return new AbstractList<>() {
      @Override
      public Integer get(int i) {
        return a[i];
      }

      @Override
      public int size() {
        return a.length;
      }
    };
  }
}
