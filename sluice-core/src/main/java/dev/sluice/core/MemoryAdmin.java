package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The in-memory store's admin view: reads and edits one key's slot as a decision would (under its
 * guard word, or by compare-and-set for a one-long state), never inserting a key, and lists the
 * keys its {@link RecentRefusals} noted. Off the decision path: here allocation is fine.
 */
final class MemoryAdmin {

  private final MemoryStore store;

  MemoryAdmin(MemoryStore store) {
    this.store = store;
  }

  /** Edits a state in place; returns true if it changed anything. */
  private interface Edit {
    boolean apply(long[] s, int off, long now);
  }

  List<KeyState> refused(Rule rule, int limit) {
    if (limit < 1) {
      throw Checks.invalid("limit", limit, "1 to " + KeyState.MAX_LIST);
    }
    int max = Math.min(limit, KeyState.MAX_LIST);
    long now = store.now();
    List<KeyState> out = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (RecentRefusals.Entry e : store.refusals(rule).recent()) {
      if (out.size() >= max) {
        break;
      }
      String key = rule.keyText(e.identity());
      if (!seen.add(key)) {
        continue;
      }
      KeyState state = state(rule, key, e.identity(), now);
      if (state.refusing()) {
        out.add(state.refusedAgo(Duration.ofNanos(Math.max(0, now - e.at()))));
      }
    }
    return out;
  }

  KeyState state(Rule rule, String key) {
    return state(rule, key, rule.identityOf(key), store.now());
  }

  KeyState state(Rule rule, Identity identity) {
    return state(rule, rule.keyText(identity), identity, store.now());
  }

  private KeyState state(Rule rule, String key, Identity identity, long now) {
    long[] s = new long[rule.stateSize()];
    boolean present = edit(rule, identity, (state, off, t) -> {
      System.arraycopy(state, off, s, 0, s.length);
      return true;
    });
    if (!present) {
      StateLayout.of(rule).init(s, 0, now);
    }
    Duration ban = Duration.ZERO;
    if (rule.banNanos() > 0) {
      ban = Duration.ofNanos(Math.max(0, s[s.length - 1] - now));
    }
    List<KeyState.LimitState> limits = new ArrayList<>();
    Algorithm.Probe probe = new Algorithm.Probe();
    int at = 0;
    List<Limit> named = rule.limits();
    Algorithm[] algorithms = rule.algorithms();
    for (int j = 0; j < algorithms.length; j++) {
      // Cost 0 reads what is left and when the limit is full; cost 1 whether a call would pass.
      probe.clear();
      algorithms[j].test(s, at, now, 0, probe);
      long remaining = probe.remaining;
      long reset = present ? Math.max(0, probe.resetNanos) : 0;
      probe.clear();
      boolean ok = algorithms[j].test(s, at, now, 1, probe);
      limits.add(new KeyState.LimitState(named.get(j).name(), remaining, Duration.ofNanos(reset),
          ok ? Duration.ZERO : Duration.ofNanos(Math.max(1, probe.retryAfterNanos))));
      at += algorithms[j].stateSize();
    }
    return new KeyState(rule.name(), key, present, ban, limits, null);
  }

  boolean unban(Rule rule, String key) {
    Identity identity = rule.identityOf(key);
    if (rule.banNanos() == 0) {
      return false;
    }
    int last = rule.stateSize() - 1;
    return edit(rule, identity, (s, off, now) -> {
      if (s[off + last] - now <= 0) {
        return false;
      }
      s[off + last] = now;
      return true;
    });
  }

  boolean reset(Rule rule, String key) {
    Identity identity = rule.identityOf(key);
    StateLayout layout = StateLayout.of(rule);
    return edit(rule, identity, (s, off, now) -> {
      boolean fresh = layout.isFresh(s, off, now);
      layout.init(s, off, now);
      return !fresh;
    });
  }

  /**
   * Applies {@code edit} to the key's state as a decision would; false when the key is absent
   * (never inserted here) or the edit changed nothing.
   */
  private boolean edit(Rule rule, Identity identity, Edit edit) {
    MemoryTable t = store.table(rule);
    KeyHash hash = KeyHash.create();
    hash.of(rule, identity);
    for (int spins = 0; ; spins++) {
      MemoryTable.Arrays arrays = t.segment(hash.a).arrays;
      int base = t.find(arrays, hash.a, hash.b);
      if (base < 0) {
        return false;
      }
      long[] slots = arrays.slots;
      if (t.cas) {
        long v = MemoryTable.getVolatile(slots, base + 2);
        if (v == MemoryTable.DEAD) {
          continue;
        }
        if (v == MemoryTable.LOCKED) {
          MemoryTable.backOff(spins);
          continue;
        }
        long[] cell = {v};
        long now = store.now();
        if (!edit.apply(cell, 0, now)) {
          return false;
        }
        if (cell[0] == v || MemoryTable.cas(slots, base + 2, v, cell[0])) {
          return true;
        }
        continue;
      }
      if (!MemoryTable.lock(slots, base)) {
        continue;
      }
      try {
        long now = store.now();
        if (t.inline) {
          return edit.apply(slots, base + 3, now);
        }
        return edit.apply((long[]) arrays.states[base / t.stride], 0, now);
      } finally {
        MemoryTable.unlock(slots, base);
      }
    }
  }

  /** A stage completed on the calling thread, as every in-memory call is. */
  static <T> CompletionStage<T> now(Supplier<T> call) {
    try {
      return CompletableFuture.completedFuture(call.get());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
