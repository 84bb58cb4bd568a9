package dev.sluice.redis;

import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Verdict;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Remembers, per key, that Redis refused it until some instant, and refuses it locally until then
 * (as Envoy's rate limit service does), so a flood from one refused key costs about one Redis call
 * per key per retry-after per instance.
 *
 * <p>Exact for the refused rule: its state cannot gain allowance before retry-after (refused calls
 * consume nothing; only time adds allowance, and retry-after is the earliest instant the same call
 * fits). A hit applies to calls of the same rule object and at least the cached cost. Other rules
 * of a check answered from the cache are reported as allowed placeholders: they neither consume
 * nor decide, since the check is refused anyway. At most {@code max} entries; when full, expired
 * entries are swept, and if none expired the new refusal is not cached.
 *
 * <p>A ban is the exception to exactness: an operator may lift it (the admin API) on any instance.
 * This instance forgets the key at once ({@link #forget}); every instance asks Redis again at
 * least every {@value #BAN_RECHECK_MILLIS} ms while a key is banned, so a lift elsewhere reaches it
 * within that, at the cost of one Redis call per banned key per second per instance. A rule whose
 * action is {@code challenge} is the other exception (a solved challenge resets the client's
 * count, on whichever instance verified it): its refusals are asked again as often.
 */
final class RefusalCache {

  static final long BAN_RECHECK_MILLIS = 1000;
  private static final long BAN_RECHECK_NANOS = BAN_RECHECK_MILLIS * 1_000_000L;

  /** {@code until} the refusal holds; {@code ask} when to ask Redis again (a ban's recheck). */
  private record Entry(Rule rule, long cost, Verdict verdict, long at, long until, long ask) {}

  private static final Verdict PLACEHOLDER = Verdict.allowed(0, 0, 0, Double.NaN);

  private final int max;
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicLong lastSweep = new AtomicLong(Long.MIN_VALUE);

  RefusalCache(int max) {
    this.max = max;
  }

  /** The cached answer for this check at local time {@code now}, or null to ask Redis. */
  List<Verdict> lookup(List<Rule> rules, List<String> keys, long cost, long now) {
    Verdict[] out = null;
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (rule.mode() != Mode.ENFORCE) {
        continue;
      }
      String key = keys.get(i);
      Entry e = entries.get(key);
      if (e == null) {
        continue;
      }
      long left = e.until - now;
      if (left <= 0 || e.ask - now <= 0) {
        entries.remove(key, e);
        continue;
      }
      if (e.rule != rule || cost < e.cost) {
        continue;
      }
      if (out == null) {
        out = new Verdict[rules.size()];
      }
      Verdict v = e.verdict;
      out[i] = v.banned()
          ? Verdict.banned(left)
          : Verdict.refused(v.limitIndex(), v.remaining(),
              Math.max(0, v.resetNanos() - (now - e.at)), left, v.score(), false);
    }
    if (out == null) {
      return null;
    }
    for (int i = 0; i < out.length; i++) {
      if (out[i] == null) {
        out[i] = PLACEHOLDER;
      }
    }
    return Arrays.asList(out);
  }

  /** Caches each enforcing refusal of a check that Redis answered; {@code now} is its start. */
  void record(List<Rule> rules, List<String> keys, long cost, List<Verdict> verdicts, long now) {
    for (int i = 0; i < rules.size(); i++) {
      Verdict v = verdicts.get(i);
      if (v.allowed() || v.retryAfterNanos() <= 0 || rules.get(i).mode() != Mode.ENFORCE) {
        continue;
      }
      if (entries.size() >= max && !sweep(now)) {
        continue;
      }
      long until = now + v.retryAfterNanos();
      // A ban may be lifted, and a challenging rule's count is reset by a solve, on any
      // instance: those refusals are asked again within a second.
      boolean resettable = v.banned() || v.banApplied()
          || rules.get(i).action() == Rule.Action.CHALLENGE;
      long ask = resettable ? now + Math.min(v.retryAfterNanos(), BAN_RECHECK_NANOS) : until;
      entries.put(keys.get(i), new Entry(rules.get(i), cost, v, now, until, ask));
    }
  }

  /** Drops expired entries, at most once per millisecond; true if there is room afterwards. */
  private boolean sweep(long now) {
    long last = lastSweep.get();
    boolean due = last == Long.MIN_VALUE || now - last >= 1_000_000L;
    if (due && lastSweep.compareAndSet(last, now)) {
      entries.values().removeIf(e -> e.until - now <= 0 || e.ask - now <= 0);
    }
    return entries.size() < max;
  }

  /** Forgets a key (its ban was lifted or its state reset here). */
  void forget(String key) {
    entries.remove(key);
  }

  int size() {
    return entries.size();
  }
}
