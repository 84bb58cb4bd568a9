package dev.sluice.core;

import dev.sluice.core.MemoryTable.Segment;
import java.util.List;

/**
 * The decisions of the in-memory store on state held in place ({@code s[off..]}): a rule's test,
 * commit and ban, the atomic check over several keys, and the sweep of one segment; and a
 * check's working state (its {@link Entry entries}, kept in a {@link Scratch} per verdict buffer).
 */
final class MemoryChecks {

  private MemoryChecks() {}

  /** Where one check's keys are found; one per verdict buffer, reused. */
  static final class Scratch {
    final KeyHash hash = KeyHash.create();
    Entry[] entries = {new Entry()};
    int[] order = new int[1];

    Entry[] entries(int n) {
      if (entries.length < n) {
        Entry[] grown = new Entry[n];
        for (int i = 0; i < n; i++) {
          grown[i] = i < entries.length ? entries[i] : new Entry();
        }
        entries = grown;
        order = new int[n];
      }
      return entries;
    }
  }

  /** One key's slot, and during a check its state: {@code state[off..]}. */
  static final class Entry {
    MemoryTable table;
    MemoryTable.Arrays arrays;
    long[] slots;
    int base;
    long ka;
    long kb;
    final long[] cell = new long[1];
    long[] state;
    int off;
    /** The entry this one shares a slot with (a rule listed twice), or -1. */
    int alias;
    boolean locked;

    void at(MemoryTable.Arrays arrays, int base) {
      this.arrays = arrays;
      this.slots = arrays.slots;
      this.base = base;
    }

    /** Points {@link #state} at the slot's state; for a guarded slot, call it holding the guard. */
    void bindState() {
      if (table.cas) {
        state = cell;
        off = 0;
      } else if (table.inline) {
        state = slots;
        off = base + 3;
      } else {
        state = (long[]) arrays.states[base / table.stride];
        off = 0;
      }
    }
  }

  /** The check's scratch kept in {@code out}, made on first use. */
  static Scratch scratch(Verdicts out) {
    Object s = out.scratch;
    if (s instanceof Scratch sc) {
      return sc;
    }
    Scratch sc = new Scratch();
    out.scratch = sc;
    return sc;
  }

  /** Tests every limit of {@code rule}; writes verdict {@code i}; returns whether it allows. */
  static boolean test(Rule rule, long[] s, int off, long now, long cost, Algorithm.Probe probe,
      Verdicts out, int i) {
    int banAt = off + rule.stateSize() - 1;
    if (rule.banNanos() > 0 && s[banAt] - now > 0) {
      out.ban(i, s[banAt] - now);
      return false;
    }
    Algorithm[] algorithms = rule.algorithms();
    int at = off;
    int refused = -1;
    int binding = -1;
    long remaining = 0;
    long reset = 0;
    long retry = 0;
    double score = Double.NaN;
    for (int j = 0; j < algorithms.length; j++) {
      Algorithm algorithm = algorithms[j];
      probe.clear();
      boolean ok = algorithm.test(s, at, now, cost, probe);
      at += algorithm.stateSize();
      if (!ok && (refused < 0 || probe.retryAfterNanos > retry)) {
        refused = j;
        remaining = probe.remaining;
        reset = probe.resetNanos;
        retry = probe.retryAfterNanos;
        score = probe.score;
      } else if (ok && refused < 0 && (binding < 0 || probe.remaining < remaining)) {
        binding = j;
        remaining = probe.remaining;
        reset = probe.resetNanos;
        score = probe.score;
      }
    }
    if (refused >= 0) {
      out.refuse(i, refused, remaining, reset, retry, score, false);
      return false;
    }
    out.allow(i, binding, remaining, reset, score);
    return true;
  }

  static void commit(Rule rule, long[] s, int off, long now, long cost) {
    int at = off;
    for (Algorithm algorithm : rule.algorithms()) {
      algorithm.commit(s, at, now, cost);
      at += algorithm.stateSize();
    }
  }

  /** Starts the rule's ban on a refusal by a limit of an enforcing check. */
  static void banIfDue(Rule rule, long[] s, int off, long now, Verdicts out, int i) {
    long ban = rule.banNanos();
    if (out.banned(i) || ban == 0) {
      return;
    }
    s[off + rule.stateSize() - 1] = now + ban;
    out.refuse(i, out.limitIndex(i), out.remaining(i), Math.max(out.resetNanos(i), ban), ban,
        out.score(i), true);
  }

  /**
   * A check over several keys: their slots are held in one global order (table, then key), so
   * two checks never wait on each other in a cycle; all are tested before any commits. A slot
   * that died meanwhile (swept, resized) releases everything and starts over.
   */
  static void evaluateMany(MemoryStore store, List<Rule> rules, Entry[] entries, Scratch sc,
      long cost, Verdicts out) {
    int n = rules.size();
    int[] order = sc.order;
    sort(entries, order, n);
    while (!lockAll(entries, order, n)) {
      unlockAll(entries, n);
      for (int i = 0; i < n; i++) {
        store.locate(entries[i], rules.get(i), sc.hash, false);
      }
    }
    try {
      for (int i = 0; i < n; i++) {
        Entry e = entries[i];
        if (e.alias >= 0) {
          e.state = entries[e.alias].state;
          e.off = entries[e.alias].off;
        } else {
          e.bindState();
        }
      }
      decide(rules, entries, store.now(), cost, out);
    } finally {
      unlockAll(entries, n);
    }
  }

  private static void decide(List<Rule> rules, Entry[] entries, long now, long cost,
      Verdicts out) {
    int n = rules.size();
    boolean pass = true;
    for (int i = 0; i < n; i++) {
      Rule rule = rules.get(i);
      Entry e = entries[i];
      if (!test(rule, e.state, e.off, now, cost, out.probe, out, i)
          && rule.mode() == Mode.ENFORCE) {
        pass = false;
      }
    }
    for (int i = 0; i < n; i++) {
      Rule rule = rules.get(i);
      Entry e = entries[i];
      if (pass && out.allowed(i)) {
        commit(rule, e.state, e.off, now, cost);
      } else if (!pass && !out.allowed(i) && rule.mode() == Mode.ENFORCE) {
        banIfDue(rule, e.state, e.off, now, out, i);
      }
    }
  }

  /** Orders entry indices by (table, key); insertion sort over a handful of rules. */
  private static void sort(Entry[] entries, int[] order, int n) {
    for (int i = 0; i < n; i++) {
      int k = i;
      while (k > 0 && before(entries[i], entries[order[k - 1]])) {
        order[k] = order[k - 1];
        k--;
      }
      order[k] = i;
    }
  }

  private static boolean before(Entry x, Entry y) {
    if (x.table.id != y.table.id) {
      return x.table.id < y.table.id;
    }
    return x.ka != y.ka ? x.ka < y.ka : x.kb < y.kb;
  }

  /** Takes every slot in order; false (holding some) when one died. */
  private static boolean lockAll(Entry[] entries, int[] order, int n) {
    for (int k = 0; k < n; k++) {
      Entry e = entries[order[k]];
      e.locked = false;
      e.alias = -1;
      if (k > 0) {
        Entry prev = entries[order[k - 1]];
        if (prev.table == e.table && prev.slots == e.slots && prev.base == e.base) {
          e.alias = prev.alias >= 0 ? prev.alias : order[k - 1];
          continue;
        }
      }
      if (!lock(e)) {
        return false;
      }
    }
    return true;
  }

  private static boolean lock(Entry e) {
    if (!e.table.cas) {
      e.locked = MemoryTable.lock(e.slots, e.base);
      return e.locked;
    }
    for (int spins = 0; ; spins++) {
      long v = MemoryTable.getVolatile(e.slots, e.base + 2);
      if (v == MemoryTable.DEAD) {
        return false;
      }
      if (v != MemoryTable.LOCKED
          && MemoryTable.cas(e.slots, e.base + 2, v, MemoryTable.LOCKED)) {
        e.cell[0] = v;
        e.locked = true;
        return true;
      }
      MemoryTable.backOff(spins);
    }
  }

  /** Releases every held slot; a one-long state gets its (possibly committed) value back. */
  private static void unlockAll(Entry[] entries, int n) {
    for (int i = 0; i < n; i++) {
      Entry e = entries[i];
      if (!e.locked) {
        continue;
      }
      e.locked = false;
      if (e.table.cas) {
        // An unlock: a release store suffices (no fence), as for a guard word.
        MemoryTable.setRelease(e.slots, e.base + 2, e.cell[0]);
      } else {
        MemoryTable.unlock(e.slots, e.base);
      }
    }
  }

  /**
   * Deletes up to {@code max} keys of {@code seg}: fresh ones, or with {@code idle} any that is
   * not refusing. Returns how many. Keys being decided right now are left alone.
   */
  static long drop(MemoryTable t, Segment seg, long now, boolean idle, long max) {
    long dropped = 0;
    long[] cell = new long[1];
    seg.lock();
    try {
      MemoryTable.Arrays arrays = seg.arrays;
      long[] slots = arrays.slots;
      int cap = arrays.capacity;
      for (int i = 0; i < cap && dropped < max; i++) {
        int base = i * t.stride;
        long ka = slots[base];
        if (ka == MemoryTable.EMPTY || ka == MemoryTable.DELETED) {
          continue;
        }
        if (t.cas) {
          long v = MemoryTable.getVolatile(slots, base + 2);
          if (v == MemoryTable.LOCKED || v == MemoryTable.DEAD) {
            continue;
          }
          cell[0] = v;
          if (droppable(t, cell, 0, now, idle)
              && MemoryTable.cas(slots, base + 2, v, MemoryTable.DEAD)) {
            t.delete(seg, arrays, base);
            dropped++;
          }
        } else if (MemoryTable.lock(slots, base)) {
          long[] s = t.inline ? slots : (long[]) arrays.states[i];
          if (droppable(t, s, t.inline ? base + 3 : 0, now, idle)) {
            // Gives the guard back as gone: a release, like any unlock.
            MemoryTable.setRelease(slots, base + 2, MemoryTable.GONE);
            t.delete(seg, arrays, base);
            dropped++;
          } else {
            MemoryTable.unlock(slots, base);
          }
        }
      }
      t.compact(seg);
    } finally {
      seg.unlock();
    }
    return dropped;
  }

  private static boolean droppable(MemoryTable t, long[] s, int off, long now, boolean idle) {
    return idle ? !t.layout.isRefusing(s, off, now) : t.layout.isFresh(s, off, now);
  }
}
