package dev.sluice.server.replay;

import dev.sluice.core.policy.RequestVerdict;

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
 *
 * <p>Lines are decided in batches of {@value #BATCH}: each line is first matched (its target,
 * {@code Policy.select}, the client's address: nothing the decisions change), then the batch's
 * store keys and client slots are hinted all at once ({@link Store#prefetch},
 * {@link ClientTable#prefetch}: tight loops of independent reads, so their cache misses overlap
 * instead of coming one after another; a miss costs about 250 ns here), then the lines are
 * decided in order, the clock moved by each line's time as before.
 */
final class Engine {

  /**
   * Hears every decision, in the lines' order (tests compare them with the gateway's); the record
   * it gets carries the line's number and input only.
   */
  interface Listener {
    void decided(LogRecord r, String outcome, String rule, String route);
  }

  // The gateway's words for the same verdicts (RequestVerdict), so a replay and a live log agree.
  static final String ALLOWED = RequestVerdict.ALLOWED.label();
  static final String REFUSED = RequestVerdict.REFUSED.label();
  static final String SHADOW = RequestVerdict.SHADOW_REFUSED.label();
  static final String DEGRADED = RequestVerdict.DEGRADED.label();
  static final String EXEMPT = RequestVerdict.EXEMPT.label();
  static final String INVALID = RequestVerdict.INVALID.label();
  private static final byte[] INVALID_BYTES = INVALID.getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  /** Lines matched and hinted before the first of them is decided. */
  static final int BATCH = 16;
  private static final int K_INVALID = 0;
  private static final int K_EXEMPT = 1;
  private static final int K_ALLOWLISTED = 2;
  private static final int K_UNLIMITED = 3;
  private static final int K_LIMITED = 4;

  /** A line matched and waiting for its decision: what the decision needs of it. */
  private static final class Pending {
    /** The line's number and input, for the listener (no field of the line is kept). */
    final LogRecord echo = new LogRecord();
    long micros;
    /** The line's duration ($request_time), or -1 when its log has none. */
    long durationMicros;
    /** Its place in the log, which orders lines that arrived in the same microsecond. */
    long seq;
    int kind;
    Check check;
    ClientAddress client;
    long key;
    boolean hasAgent;
    long agent;
  }

  final Policy policy;
  final ReplayClock clock = new ReplayClock();
  private final Store store;
  private final RateLimiter limiter;
  private final ReplayView view;
  private final MutableDecision decision = new MutableDecision();
  private final Map<Rule, Integer> ruleIndex = new IdentityHashMap<>();
  private final Map<String, Integer> ruleByName = new HashMap<>();
  final Tally tally;
  private final Listener listener;
  private final Pending[] pending = new Pending[BATCH];
  private int pendingCount;
  @SuppressWarnings("unchecked")
  private final List<Rule>[] hintRules = new List[BATCH];
  private final dev.sluice.core.Identity[] hintIdentities = new dev.sluice.core.Identity[BATCH];
  private final long[] hintClients = new long[BATCH];
  private final long[] hintFound = new long[BATCH];
  /** Where the hints' reads go, so the JIT keeps them; of no meaning. */
  long sink;

  Engine(Policy policy, int maxKeys, int clientCap, Listener listener) {
    this.policy = policy;
    this.store = Store.memory(clock, maxKeys);
    this.limiter = RateLimiter.of(store);
    for (int i = 0; i < BATCH; i++) {
      pending[i] = new Pending();
    }
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

  /**
   * Takes the line {@code r} (read into a record its input reuses): matched now, decided with
   * its batch, in the order offered. {@link #finish} decides the last batch.
   */
  void offer(LogRecord r) {
    if (r.has(Field.DURATION)) {
      arrived(r);
      return;
    }
    while (!arrivals.isEmpty() && arrivals.peek().micros <= r.micros) {
      decide(arrivals.poll());
    }
    prepare(r, pending[pendingCount++]);
    if (pendingCount == BATCH) {
      flush();
    }
  }

  /**
   * How long a line may wait for lines that arrived before it and were written after it. nginx
   * writes a line when its response ends, so a log with {@code $request_time} is in the order
   * requests ended; they are decided in the order they arrived ({@code $msec - $request_time}).
   * The log cannot order requests that arrived in the same millisecond: the longest goes first,
   * then the log's order. Why: a request nginx refused is logged with its refusal's duration
   * (0 ms), so in log order such a request would take a concurrency lease of 0 ms before the
   * ones nginx served and held; longest first, a tie keeps the leases of the served ones. (A
   * limit_req count is the same in any order of one key's requests of one millisecond.) 60 s is
   * nginx's default proxy_read_timeout; at most {@value #REORDER_LINES} lines wait (the earliest
   * go first beyond that).
   */
  static final long REORDER_MICROS = 60_000_000L;
  static final int REORDER_LINES = 1_000_000;
  private final java.util.PriorityQueue<Pending> arrivals = new java.util.PriorityQueue<>(
      (x, y) -> x.micros != y.micros ? Long.compare(x.micros, y.micros)
          : x.durationMicros != y.durationMicros ? Long.compare(y.durationMicros, x.durationMicros)
          : Long.compare(x.seq, y.seq));
  private long seq;

  private void arrived(LogRecord r) {
    Pending p = new Pending();
    prepare(r, p);
    p.seq = seq++;
    arrivals.add(p);
    long written = r.micros + r.durationMicros;
    while (!arrivals.isEmpty() && (arrivals.peek().micros + REORDER_MICROS <= written
        || arrivals.size() > REORDER_LINES)) {
      decide(arrivals.poll());
    }
  }

  /** Decides the lines offered and not yet decided, in order, after hinting their keys. */
  void flush() {
    int n = pendingCount;
    int m = 0;
    for (int i = 0; i < n; i++) {
      Pending p = pending[i];
      if (p.kind == K_LIMITED) {
        hintRules[m] = p.check.rules();
        hintIdentities[m] = p.check.identity();
        hintClients[m] = p.key;
        m++;
      }
    }
    store.prefetch(hintRules, hintIdentities, m);
    sink += tally.clients.prefetch(hintClients, hintFound, m);
    for (int i = 0; i < n; i++) {
      decide(pending[i]);
    }
    java.util.Arrays.fill(hintRules, 0, m, null);
    java.util.Arrays.fill(hintIdentities, 0, m, null);
    pendingCount = 0;
  }

  /** Everything of the line its decision needs, which no decision changes. */
  private void prepare(LogRecord r, Pending p) {
    p.micros = r.micros;
    p.durationMicros = r.has(Field.DURATION) ? r.durationMicros : -1;
    p.echo.line = r.line;
    p.echo.input = r.input;
    p.check = null;
    p.client = null;
    view.reset(r);
    // The gateway answers these itself (400) and decides nothing: a target its path rule
    // refuses, and in its own log a line it marked invalid (413, 431, a bad head).
    if (!view.target().ok() || r.is(Field.OUTCOME, INVALID_BYTES)) {
      p.kind = K_INVALID;
      return;
    }
    Check check = policy.select(view);
    p.check = check;
    if (check.exempt()) {
      p.kind = check.allowlisted() ? K_ALLOWLISTED : K_EXEMPT;
      return;
    }
    if (check.rules().isEmpty() && check.leases().isEmpty()) {
      p.kind = K_UNLIMITED;
      return;
    }
    p.kind = K_LIMITED;
    ClientAddress client = view.clientAddress(policy.clientAddress());
    p.client = client;
    p.key = key(client);
    p.hasAgent = r.has(Field.USER_AGENT) || r.has(Field.SESSION);
    p.agent = !p.hasAgent ? 0 : r.has(Field.SESSION) ? r.sketch(Field.SESSION)
        : r.sketch(Field.USER_AGENT);
  }

  private void decide(Pending p) {
    long now = clock.advance(p.micros);
    Tally t = tally;
    if (t.firstMicros == Long.MIN_VALUE) {
      t.firstMicros = now;
    }
    t.lastMicros = now;
    t.decided++;
    LogRecord r = p.echo;
    Check check = p.check;
    switch (p.kind) {
      case K_INVALID -> {
        t.invalid++;
        if (listener != null) {
          listener.decided(r, INVALID, null, null);
        }
        return;
      }
      case K_EXEMPT, K_ALLOWLISTED -> {
        if (p.kind == K_ALLOWLISTED) {
          t.allowlisted++;
        } else {
          t.exempt++;
        }
        if (listener != null) {
          listener.decided(r, EXEMPT, null, check.route());
        }
        return;
      }
      case K_UNLIMITED -> {
        t.unlimited++;
        if (listener != null) {
          listener.decided(r, ALLOWED, null, check.route());
        }
        return;
      }
      default -> {
        // K_LIMITED: decided below.
      }
    }
    List<Rule> rules = check.rules();
    // Concurrency rules take their leases first, as the gateway's admission step does, and only
    // from a log that says how long each request took.
    Rule leaseRefused = p.durationMicros >= 0 ? leases.refusing(check, now) : null;
    boolean allowed = limiter.check(leaseRefused == null ? rules : List.of(),
        check.identity(), check.cost(), decision) && leaseRefused == null;
    if (allowed && p.durationMicros >= 0) {
      leases.take(check, now, now + p.durationMicros);
    }
    ClientAddress client = p.client;
    long key = p.key;
    ClientTable clients = t.clients;
    int slot = clients.slot(key, now);
    clients.request(slot);
    if (p.hasAgent) {
      clients.agent(slot, p.agent);
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
      rule = leaseRefused != null ? leaseRefused.name() : decision.rule();
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

  private final ReplayLeases leases = new ReplayLeases();

  /** Ends the replay: the last lines decided, every client's peaks into the histograms. */
  void finish() {
    flush();
    while (!arrivals.isEmpty()) {
      decide(arrivals.poll());
    }
    tally.clients.finish();
  }
}
