package dev.sluice.server.replay;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A replay's result as one document (maps and lists): what {@code --json} prints, what the HTML
 * report embeds and draws, and what the terminal summary reads. Times are ISO 8601 in UTC, with
 * epoch milliseconds beside them where a chart needs numbers.
 */
final class ReplayReport {

  /** A refused address behind which at least this many user agents (or sessions) were seen. */
  static final int SHARED_AGENTS = 10;

  private ReplayReport() {}

  /**
   * The document.
   *
   * @param suggest the share of clients a suggested limit may refuse (0.001 for 0.1%), or NaN
   * @param top how many refused clients to list
   */
  static Map<String, Object> model(Replay.Result r, Policy a, String aName, Policy b,
      String bName, double suggest, int top) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("policy", aName);
    m.put("compare", bName);
    List<Object> inputs = new ArrayList<>();
    for (Replay.InputInfo i : r.inputs()) {
      Map<String, Object> in = new LinkedHashMap<>();
      in.put("name", i.name());
      in.put("format", i.format());
      in.put("lines", i.lines());
      in.put("bytes", i.bytes());
      in.put("gzip", i.gzip());
      inputs.add(in);
    }
    m.put("inputs", inputs);
    m.put("lines", r.lines());
    m.put("decided", r.parsed());
    m.put("notParsed", r.problems().count());
    m.put("notParsedFirst", r.problems().first().stream().map(Object::toString).toList());
    m.put("timestampsBackwards", r.backwards());
    m.put("maxBehindMs", r.maxBehindMicros() / 1000);
    Tally t = r.a();
    if (t != null && t.firstMicros != Long.MIN_VALUE) {
      m.put("from", time(t.firstMicros));
      m.put("to", time(t.lastMicros));
      m.put("durationSeconds", (t.lastMicros - t.firstMicros) / 1e6);
    }
    m.put("elapsedSeconds", r.elapsedNanos() / 1e9);
    m.put("linesPerSecond", r.elapsedNanos() == 0 ? 0
        : Math.round(r.lines() / (r.elapsedNanos() / 1e9)));
    if (t == null) {
      return m;
    }
    m.put("clientsApproximate", t.clients.dropped > 0 || (r.b() != null
        && r.b().clients.dropped > 0));
    m.put("refusedApproximate", t.refusedClients.approximate);
    m.put("shareSuggested", Double.isNaN(suggest) ? null : suggest);
    m.put("a", policy(t, a, suggest, top));
    if (r.b() != null) {
      m.put("b", policy(r.b(), b, suggest, top));
      m.put("onlyA", only(t, r.b(), top));
      m.put("onlyB", only(r.b(), t, top));
    }
    return m;
  }

  private static Map<String, Object> policy(Tally t, Policy p, double suggest, int top) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("decided", t.decided);
    m.put("allowed", t.allowedCount);
    m.put("refused", t.refusedCount);
    m.put("shadowRefused", t.shadowCount);
    m.put("exempt", t.exempt);
    m.put("allowlisted", t.allowlisted);
    m.put("noRule", t.unlimited);
    m.put("invalid", t.invalid);
    List<Object> rules = new ArrayList<>();
    for (int i = 0; i < t.rules.size(); i++) {
      Rule rule = p.rules().get(t.rules.get(i));
      Map<String, Object> rm = new LinkedHashMap<>();
      rm.put("name", rule.name());
      rm.put("mode", rule.mode().name().toLowerCase(Locale.ROOT));
      Limit limit = rule.limits().isEmpty() ? null : rule.limits().get(0);
      long capacity = limit == null ? 0 : limit.capacity();
      if (limit != null) {
        Map<String, Object> lm = new LinkedHashMap<>();
        lm.put("kind", limit.kind().configName());
        lm.put("capacity", capacity);
        lm.put("windowSeconds", limit.windowNanos() / 1e9);
        lm.put("text", describe(limit));
        rm.put("limit", lm);
      }
      rm.put("requests", t.requests[i]);
      rm.put("refused", t.refused[i]);
      rm.put("shadowRefused", t.shadow[i]);
      if (t.firstRefusal[i] != Long.MIN_VALUE) {
        rm.put("firstRefusal", Map.of("time", time(t.firstRefusal[i]), "client",
            t.firstRefused[i]));
      } else {
        rm.put("firstRefusal", null);
      }
      rm.put("firstShadowRefusal", t.firstShadow[i] == Long.MIN_VALUE ? null
          : time(t.firstShadow[i]));
      PeakHistogram h = t.clients.histograms[i];
      rm.put("clients", h.total);
      rm.put("clientsAboveLimit", limit == null ? 0 : h.above(capacity));
      if (!Double.isNaN(suggest) && h.total > 0) {
        long s = h.limitFor(suggest);
        Map<String, Object> sm = new LinkedHashMap<>();
        sm.put("capacity", s);
        sm.put("windowSeconds", t.windowMicros[i] / 1e6);
        sm.put("clientsAbove", h.above(s));
        sm.put("text", s + " per " + duration(t.windowMicros[i]) + (limit == null ? ""
            : limit.kind() == Limit.Kind.TOKEN_BUCKET ? " (burst " + s + ", refill " + s
                + " per " + duration(t.windowMicros[i]) + ")" : ""));
        rm.put("suggestion", sm);
      }
      rm.put("peaks", bins(h));
      rules.add(rm);
    }
    m.put("rules", rules);
    m.put("series", series(t));
    List<Object> refused = new ArrayList<>();
    List<Object> shared = new ArrayList<>();
    for (RefusedClients.Entry e : t.refusedClients.top(top)) {
      Map<String, Object> em = client(e, t);
      refused.add(em);
      if (Boolean.TRUE.equals(em.get("shared"))) {
        shared.add(e.client);
      }
    }
    for (RefusedClients.Entry e : t.refusedClients.entries()) {
      if (ClientTable.agentsOf(e.agents) >= SHARED_AGENTS && !shared.contains(e.client)
          && shared.size() < top) {
        shared.add(e.client);
      }
    }
    m.put("topRefused", refused);
    m.put("refusedClients", t.refusedClients.entries().size());
    m.put("shared", shared);
    return m;
  }

  private static Map<String, Object> client(RefusedClients.Entry e, Tally t) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("client", e.client);
    m.put("refused", e.refused);
    m.put("shadowRefused", e.shadow);
    m.put("requests", e.requests);
    m.put("peak", Math.round(e.peak * 10) / 10.0);
    m.put("peakRule", e.peakRule);
    m.put("peakTime", e.peakMicros == 0 ? null : time(e.peakMicros));
    m.put("firstRefusal", time(e.firstMicros));
    m.put("firstRule", e.firstRule);
    m.put("lastRefusal", e.lastMicros == 0 ? null : time(e.lastMicros));
    int agents = ClientTable.agentsOf(e.agents);
    m.put("userAgents", agents);
    m.put("shared", agents >= SHARED_AGENTS);
    Map<String, Object> by = new LinkedHashMap<>();
    for (int i = 0; i < e.byRule.length; i++) {
      if (e.byRule[i] > 0) {
        by.put(t.rules.get(i), e.byRule[i]);
      }
    }
    m.put("byRule", by);
    Series s = e.timeline;
    Map<String, Object> tl = new LinkedHashMap<>();
    tl.put("bucketSeconds", s.width / 1e6);
    tl.put("start", s.first == Long.MIN_VALUE ? 0 : s.startMillis(0));
    tl.put("requests", java.util.Arrays.copyOf(s.rows[0], s.used));
    tl.put("refused", java.util.Arrays.copyOf(s.rows[1], s.used));
    m.put("timeline", tl);
    return m;
  }

  private static Map<String, Object> series(Tally t) {
    Series s = t.series;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("bucketSeconds", s.width / 1e6);
    m.put("start", s.first == Long.MIN_VALUE ? 0 : s.startMillis(0));
    Map<String, Object> rules = new LinkedHashMap<>();
    for (int i = 0; i < t.rules.size(); i++) {
      Map<String, Object> rm = new LinkedHashMap<>();
      rm.put("requests", java.util.Arrays.copyOf(s.rows[i * Tally.PER_RULE], s.used));
      rm.put("refused", java.util.Arrays.copyOf(s.rows[i * Tally.PER_RULE + 1], s.used));
      rm.put("shadowRefused", java.util.Arrays.copyOf(s.rows[i * Tally.PER_RULE + 2], s.used));
      rules.put(t.rules.get(i), rm);
    }
    m.put("rules", rules);
    return m;
  }

  /** Clients {@code x} refused and {@code y} did not (by {@code y}'s refused table). */
  private static List<Object> only(Tally x, Tally y, int top) {
    Set<Long> refusedByY = new HashSet<>();
    for (RefusedClients.Entry e : y.refusedClients.entries()) {
      if (e.refused > 0) {
        refusedByY.add(e.key);
      }
    }
    List<Object> out = new ArrayList<>();
    for (RefusedClients.Entry e : x.refusedClients.top(Integer.MAX_VALUE)) {
      if (e.refused > 0 && !refusedByY.contains(e.key)) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("client", e.client);
        m.put("refused", e.refused);
        m.put("requests", e.requests);
        m.put("firstRefusal", time(e.firstMicros));
        m.put("firstRule", e.firstRule);
        out.add(m);
        if (out.size() >= top) {
          break;
        }
      }
    }
    return out;
  }

  /** The fine histogram in about 30 bins of growing width, for a chart. */
  static List<Object> bins(PeakHistogram h) {
    List<Object> out = new ArrayList<>();
    int last = h.last();
    if (last < 0) {
      return out;
    }
    long top = PeakHistogram.upper(last) + 1;
    long from = 1;
    int i = 1;
    long zero = h.counts[0];
    while (from < top) {
      long to = from < 4 ? from + 1 : from + Math.max(1, from / 3);
      long count = from == 1 ? zero : 0;
      for (; i < h.counts.length && PeakHistogram.lower(i) < to; i++) {
        count += h.counts[i];
      }
      Map<String, Object> b = new LinkedHashMap<>();
      b.put("from", from);
      b.put("to", to);
      b.put("count", count);
      out.add(b);
      from = to;
    }
    return out;
  }

  static String describe(Limit l) {
    String w = duration(l.windowNanos() / 1000);
    return switch (l.kind()) {
      case TOKEN_BUCKET -> "token-bucket " + l.capacity() + " per " + w;
      case SCORE -> "score " + fmt(l.maxScore()) + " max, +" + fmt(l.perAction()) + " a call";
      default -> l.kind().configName() + " " + l.capacity() + " per " + w;
    };
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }

  static String duration(long micros) {
    Duration d = Duration.ofNanos(micros * 1000);
    if (d.toMillis() % 1000 != 0) {
      return d.toMillis() + "ms";
    }
    long s = d.getSeconds();
    if (s % 86_400 == 0) {
      return s / 86_400 + "d";
    }
    if (s % 3600 == 0) {
      return s / 3600 + "h";
    }
    if (s % 60 == 0 && s >= 60) {
      return s / 60 + "m";
    }
    return s + "s";
  }

  static String time(long micros) {
    return Instant.ofEpochMilli(Math.floorDiv(micros, 1000)).toString();
  }
}
