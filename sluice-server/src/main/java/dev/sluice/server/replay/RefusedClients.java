package dev.sluice.server.replay;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The clients refused (or shadow-refused) by any rule, at most {@link #CAP}, with their address
 * text and a timeline of requests and refusals from their first refusal on. Exact while fewer
 * than {@code CAP} clients are refused; past that a new one replaces the least refused of 32
 * sampled entries, so the most refused stay (then {@link #approximate}).
 */
final class RefusedClients {

  static final int CAP = 1000;

  /** One refused client. */
  static final class Entry {
    final long key;
    final String client;
    long refused;
    long shadow;
    long requests;
    long firstMicros;
    String firstRule;
    long lastMicros;
    final long[] byRule;
    long agents;
    double peak;
    String peakRule;
    long peakMicros;
    /** Row 0 requests, row 1 refusals (shadow ones too), from the first refusal on. */
    final Series timeline = new Series(2);

    Entry(long key, String client, int rules) {
      this.key = key;
      this.client = client;
      this.byRule = new long[rules];
    }

    long total() {
      return refused + shadow;
    }
  }

  private final Map<Long, Entry> byKey = new HashMap<>();
  private final List<Entry> entries = new ArrayList<>();
  private final int rules;
  boolean approximate;

  RefusedClients(int rules) {
    this.rules = rules;
  }

  Entry get(long key) {
    return byKey.get(key);
  }

  /**
   * The entry of a newly refused client; {@code evicted} hears of the one it replaced.
   */
  Entry add(long key, String client, java.util.function.LongConsumer evicted) {
    if (entries.size() >= CAP) {
      approximate = true;
      ThreadLocalRandom random = ThreadLocalRandom.current();
      int victim = -1;
      for (int k = 0; k < 32; k++) {
        int i = random.nextInt(entries.size());
        if (victim < 0 || entries.get(i).total() < entries.get(victim).total()) {
          victim = i;
        }
      }
      Entry gone = entries.get(victim);
      byKey.remove(gone.key);
      entries.set(victim, entries.get(entries.size() - 1));
      entries.remove(entries.size() - 1);
      evicted.accept(gone.key);
    }
    Entry e = new Entry(key, client, rules);
    byKey.put(key, e);
    entries.add(e);
    return e;
  }

  List<Entry> entries() {
    return entries;
  }

  /** The most refused first (shadow refusals count), then by address. */
  List<Entry> top(int n) {
    return entries.stream().sorted(Comparator.comparingLong(Entry::total).reversed()
        .thenComparing(e -> e.client)).limit(n).toList();
  }
}
