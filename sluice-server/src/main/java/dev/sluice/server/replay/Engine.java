package dev.sluice.server.replay;

import dev.sluice.core.Limit;
import dev.sluice.core.MutableDecision;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.Policy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One policy replayed: the gateway's own policy matching ({@link Policy#select}) and the real
 * engine ({@link RateLimiter} on the in-memory store with its key cap) on a clock the log drives,
 * deciding each line as the live gateway decided its request, and counting what it saw.
 */
final class Engine {

  /** Hears every decision (tests compare them with the gateway's). */
  interface Listener {
    void decided(LogRecord r, String outcome, String rule, String route);
  }

  static final String ALLOWED = "allowed";
  static final String REFUSED = "refused";
  static final String SHADOW = "shadow";
  static final String DEGRADED = "degraded";
  static final String EXEMPT = "exempt";
  static final String INVALID = "invalid";
  private static final byte[] INVALID_BYTES = INVALID.getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  final Policy policy;
  final ReplayClock clock = new ReplayClock();
  private final RateLimiter limiter;
  private final ReplayView view;
  private final MutableDecision decision = new MutableDecision();
  private final Map<Rule, Integer> ruleIndex = new IdentityHashMap<>();
  private final Map<String, Integer> ruleByName = new HashMap<>();
  final Tally tally;
  private final Listener listener;

  Engine(Policy policy, int maxKeys, int clientCap, Listener listener) {
    this.policy = policy;
    this.limiter = RateLimiter.of(Store.memory(clock, maxKeys));
    this.listener = listener;
    this.view = new ReplayView(policy.paths());
    List<String> names = new ArrayList<>();
    List<Long> windows = new ArrayList<>();
    for (Rule rule : policy.rules().values()) {
      ruleIndex.put(rule, names.size());
      ruleByName.put(rule.name(), names.size());
      names.add(rule.name());
      windows.add(window(rule));
    }
    long[] w = windows.stream().mapToLong(Long::longValue).toArray();
    this.tally = new Tally(List.copyOf(names), w, clientCap);
  }

  /** The window a rule's peaks are counted over: its first limit's, in microseconds (>= 1 ms). */
  static long window(Rule rule) {
    List<Limit> limits = rule.limits();
    long nanos = limits.isEmpty() ? 1_000_000_000L : limits.get(0).windowNanos();
    return Math.max(1000, nanos / 1000);
  }

  void decide(LogRecord r) {
    long now = clock.advance(r.micros);
    Tally t = tally;
    if (t.firstMicros == Long.MIN_VALUE) {
      t.firstMicros = now;
    }
    t.lastMicros = now;
    t.decided++;
    view.reset(r);
    // The gateway answers these itself (400) and decides nothing: a target its path rule
    // refuses, and in its own log a line it marked invalid (413, 431, a bad head).
    if (!view.target().ok() || r.is(Field.OUTCOME, INVALID_BYTES)) {
      t.invalid++;
      if (listener != null) {
        listener.decided(r, INVALID, null, null);
      }
      return;
    }
    Check check = policy.select(view);
    if (check.exempt()) {
      if (check.allowlisted()) {
        t.allowlisted++;
      } else {
        t.exempt++;
      }
      if (listener != null) {
        listener.decided(r, EXEMPT, null, check.route());
      }
      return;
    }
    List<Rule> rules = check.rules();
    if (rules.isEmpty()) {
      t.unlimited++;
      if (listener != null) {
        listener.decided(r, ALLOWED, null, check.route());
      }
      return;
    }
    boolean allowed = limiter.check(rules, check.identity(), check.cost(), decision);
    ClientAddress client = view.clientAddress(policy.clientAddress());
    long key = key(client);
    ClientTable clients = t.clients;
    int slot = clients.slot(key, now);
    clients.request(slot);
    if (r.has(Field.USER_AGENT) || r.has(Field.SESSION)) {
      clients.agent(slot, r.has(Field.SESSION) ? r.sketch(Field.SESSION)
          : r.sketch(Field.USER_AGENT));
    }
    int bucket = t.series.bucket(now);
    int[] indexes = indexes(rules);
    for (int ri : indexes) {
      t.requests[ri]++;
      t.series.add(ri * Tally.PER_RULE, bucket, 1);
      clients.hit(slot, ri, now);
    }
    String outcome;
    String rule;
    int refusedBy = -1;
    if (decision.degraded()) {
      outcome = DEGRADED;
      rule = decision.rule();
    } else if (!allowed) {
      outcome = REFUSED;
      rule = decision.rule();
      refusedBy = ruleByName.getOrDefault(rule, -1);
      t.refusedCount++;
      if (refusedBy >= 0) {
        t.refused[refusedBy]++;
        t.series.add(refusedBy * Tally.PER_RULE + 1, bucket, 1);
        if (t.firstRefusal[refusedBy] == Long.MIN_VALUE) {
          t.firstRefusal[refusedBy] = now;
          t.firstRefused[refusedBy] = client.toString();
        }
      }
      clients.refused(slot);
    } else if (decision.shadowRefused()) {
      outcome = SHADOW;
      rule = decision.shadowRule();
      refusedBy = ruleByName.getOrDefault(rule, -1);
      t.shadowCount++;
      if (refusedBy >= 0) {
        t.shadow[refusedBy]++;
        t.series.add(refusedBy * Tally.PER_RULE + 2, bucket, 1);
        if (t.firstShadow[refusedBy] == Long.MIN_VALUE) {
          t.firstShadow[refusedBy] = now;
        }
      }
      clients.refused(slot);
    } else {
      outcome = ALLOWED;
      rule = decision.rule();
      t.allowedCount++;
    }
    if (refusedBy >= 0 || clients.listed(slot)) {
      track(t, client, key, slot, now, refusedBy, outcome == SHADOW, indexes);
    }
    if (listener != null) {
      listener.decided(r, outcome, rule, check.route());
    }
  }

  /** Keeps the refused client's own story: counts, peak, timeline (bounded table). */
  private void track(Tally t, ClientAddress client, long key, int slot, long now, int refusedBy,
      boolean shadow, int[] indexes) {
    ClientTable clients = t.clients;
    RefusedClients.Entry e = t.refusedClients.get(key);
    if (e == null) {
      e = t.refusedClients.add(key, client.toString(), gone -> {
        int s = clients.lookup(gone);
        if (s >= 0) {
          clients.listed(s, false);
        }
      });
      clients.listed(slot, true);
      e.firstMicros = now;
      e.firstRule = t.rules.get(refusedBy);
    }
    e.requests = clients.requests(slot);
    e.agents = clients.agents(slot);
    int bucket = e.timeline.bucket(now);
    e.timeline.add(0, bucket, 1);
    if (refusedBy >= 0) {
      e.timeline.add(1, bucket, 1);
      e.lastMicros = now;
      e.byRule[refusedBy]++;
      if (shadow) {
        e.shadow++;
      } else {
        e.refused++;
      }
    }
    for (int ri : indexes) {
      // The peak under the rules that refused it, the ones a person tunes.
      if (e.byRule[ri] > 0 && clients.peak(slot, ri) > e.peak) {
        e.peak = clients.peak(slot, ri);
        e.peakRule = t.rules.get(ri);
        e.peakMicros = now;
      }
    }
  }

  /** The last rule lists seen (a policy has one list per route) and their rules' indexes. */
  private final List<?>[] seenLists = new List<?>[16];
  private final int[][] seenIndexes = new int[16][];

  private int[] indexes(List<Rule> rules) {
    for (int i = 0; i < seenLists.length && seenLists[i] != null; i++) {
      if (seenLists[i] == rules) {
        return seenIndexes[i];
      }
    }
    int[] idx = rules.stream().mapToInt(r -> ruleIndex.getOrDefault(r, -1)).filter(i -> i >= 0)
        .toArray();
    for (int i = 0; i < seenLists.length; i++) {
      if (seenLists[i] == null) {
        seenLists[i] = rules;
        seenIndexes[i] = idx;
        break;
      }
    }
    return idx;
  }

  /** A client's table key from its 128 bits (or its bucket name), no string made. */
  static long key(ClientAddress a) {
    if (!a.known()) {
      return Hashes.of(a.toString()) | 1;
    }
    long h = Hashes.mix(a.high() * 0x9e3779b97f4a7c15L ^ a.low()) ^ a.prefixLength();
    return h == 0 ? 1 : h;
  }

  /** Ends the replay: every client's peaks into the histograms. */
  void finish() {
    tally.clients.finish();
  }
}
