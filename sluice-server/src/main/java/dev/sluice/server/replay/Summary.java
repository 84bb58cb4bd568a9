package dev.sluice.server.replay;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The terminal summary of a replay, read from its {@link ReplayReport} document. */
final class Summary {

  private Summary() {}

  @SuppressWarnings("unchecked")
  static String text(Map<String, Object> m) {
    StringBuilder sb = new StringBuilder();
    List<Map<String, Object>> inputs = (List<Map<String, Object>>) m.get("inputs");
    List<String> names = new ArrayList<>();
    for (Map<String, Object> in : inputs) {
      names.add(in.get("name") + " (" + in.get("format") + ")");
    }
    sb.append("replay of ").append(String.join(", ", names)).append(" with ")
        .append(m.get("policy")).append(m.get("compare") == null ? "" : " and "
            + m.get("compare")).append('\n');
    sb.append("  ").append(n(m.get("lines"))).append(" lines, ").append(n(m.get("decided")))
        .append(" requests decided, ").append(n(m.get("notParsed"))).append(" not parsed");
    if (m.get("from") != null) {
      sb.append("; ").append(m.get("from")).append(" to ").append(m.get("to"));
    }
    sb.append('\n');
    sb.append(String.format(Locale.ROOT, "  %.1f s, %s lines/s%n", (Double) m.get("elapsedSeconds"),
        n(m.get("linesPerSecond"))));
    long back = ((Number) m.get("timestampsBackwards")).longValue();
    if (back > 0) {
      sb.append("  ").append(n(back)).append(" lines older than one before them (up to ")
          .append(n(m.get("maxBehindMs"))).append(" ms): decided at the latest time seen\n");
    }
    List<String> bad = (List<String>) m.get("notParsedFirst");
    for (String b : bad) {
      sb.append("  not parsed: ").append(b).append('\n');
    }
    Map<String, Object> a = (Map<String, Object>) m.get("a");
    if (a == null) {
      return sb.toString();
    }
    policy(sb, m.get("policy").toString(), a);
    Map<String, Object> b = (Map<String, Object>) m.get("b");
    if (b != null) {
      policy(sb, m.get("compare").toString(), b);
      only(sb, "refused by " + m.get("policy") + " and not by " + m.get("compare"),
          (List<Map<String, Object>>) m.get("onlyA"));
      only(sb, "refused by " + m.get("compare") + " and not by " + m.get("policy"),
          (List<Map<String, Object>>) m.get("onlyB"));
    }
    if (Boolean.TRUE.equals(m.get("clientsApproximate"))) {
      sb.append("\nnote: more clients than the client table holds; peaks of clients dropped and "
          + "seen again are counted twice\n");
    }
    if (Boolean.TRUE.equals(m.get("refusedApproximate"))) {
      sb.append("note: over ").append(RefusedClients.CAP).append(" clients refused: the list "
          + "keeps the most refused (counts from when each entered it)\n");
    }
    return sb.toString();
  }

  @SuppressWarnings("unchecked")
  private static void policy(StringBuilder sb, String name, Map<String, Object> p) {
    sb.append('\n').append(name).append(": ").append(n(p.get("allowed"))).append(" allowed, ")
        .append(n(p.get("refused"))).append(" refused, ").append(n(p.get("shadowRefused")))
        .append(" shadow-refused, ").append(n(p.get("exempt"))).append(" exempt, ")
        .append(n(p.get("allowlisted"))).append(" allow-listed, ").append(n(p.get("noRule")))
        .append(" under no rule, ").append(n(p.get("invalid"))).append(" invalid\n");
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"RULE", "MODE", "LIMIT", "REQUESTS", "REFUSED", "SHADOW", "CLIENTS",
        "ABOVE", "FIRST REFUSAL"});
    List<Map<String, Object>> rules = (List<Map<String, Object>>) p.get("rules");
    boolean suggested = false;
    for (Map<String, Object> r : rules) {
      Map<String, Object> limit = (Map<String, Object>) r.get("limit");
      Map<String, Object> first = (Map<String, Object>) r.get("firstRefusal");
      rows.add(new String[] {(String) r.get("name"), (String) r.get("mode"),
          limit == null ? "-" : (String) limit.get("text"), n(r.get("requests")),
          n(r.get("refused")), n(r.get("shadowRefused")), n(r.get("clients")),
          n(r.get("clientsAboveLimit")),
          first == null ? (r.get("firstShadowRefusal") == null ? "-"
              : r.get("firstShadowRefusal") + " (shadow)")
              : first.get("time") + " " + first.get("client")});
      suggested |= r.get("suggestion") != null;
    }
    table(sb, rows, "  ");
    sb.append("  (CLIENTS: clients the rule saw; ABOVE: clients whose peak within the rule's "
        + "window passed its limit)\n");
    if (suggested) {
      sb.append("\n  suggested limits:\n");
      for (Map<String, Object> r : rules) {
        Map<String, Object> s = (Map<String, Object>) r.get("suggestion");
        Map<String, Object> limit = (Map<String, Object>) r.get("limit");
        if (s != null) {
          sb.append("    ").append(r.get("name")).append(": ").append(s.get("text"))
              .append(" refuses ").append(n(s.get("clientsAbove"))).append(" of ")
              .append(n(r.get("clients"))).append(" clients")
              .append(limit == null ? "" : " (now " + limit.get("text") + ")").append('\n');
        }
      }
    }
    List<Map<String, Object>> top = (List<Map<String, Object>>) p.get("topRefused");
    if (!top.isEmpty()) {
      sb.append("\n  top refused clients:\n");
      List<String[]> t = new ArrayList<>();
      t.add(new String[] {"CLIENT", "REFUSED", "SHADOW", "REQUESTS", "PEAK", "AT", "FIRST REFUSAL",
          "USER AGENTS"});
      for (Map<String, Object> c : top) {
        t.add(new String[] {(String) c.get("client"), n(c.get("refused")),
            n(c.get("shadowRefused")), n(c.get("requests")),
            peak(c.get("peak")) + " " + c.get("peakRule"), String.valueOf(c.get("peakTime")),
            c.get("firstRefusal") + " " + c.get("firstRule"),
            "~" + c.get("userAgents") + (Boolean.TRUE.equals(c.get("shared"))
                ? " (shared address?)" : "")});
      }
      table(sb, t, "    ");
    }
    List<String> shared = (List<String>) p.get("shared");
    if (!shared.isEmpty()) {
      sb.append("\n  look like shared addresses (").append(ReplayReport.SHARED_AGENTS)
          .append("+ user agents or sessions behind one refused address): ")
          .append(String.join(", ", shared)).append('\n');
    }
  }

  private static void only(StringBuilder sb, String title, List<Map<String, Object>> rows) {
    sb.append('\n').append(title).append(": ").append(rows.size()).append(rows.isEmpty() ? "\n"
        : "\n");
    for (Map<String, Object> c : rows) {
      sb.append("    ").append(c.get("client")).append("  refused ").append(n(c.get("refused")))
          .append(" of ").append(n(c.get("requests"))).append(", first ")
          .append(c.get("firstRefusal")).append(" by ").append(c.get("firstRule")).append('\n');
    }
  }

  private static void table(StringBuilder sb, List<String[]> rows, String indent) {
    int[] w = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        w[i] = Math.max(w[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder(indent);
      for (int i = 0; i < r.length; i++) {
        boolean number = i > 0 && !r[i].isEmpty() && Character.isDigit(r[i].charAt(0))
            && r[i].chars().allMatch(c -> Character.isDigit(c) || c == ',');
        String cell = number ? " ".repeat(w[i] - r[i].length()) + r[i]
            : r[i] + " ".repeat(w[i] - r[i].length());
        line.append(cell).append(i == r.length - 1 ? "" : "  ");
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
  }

  private static String peak(Object v) {
    double d = ((Number) v).doubleValue();
    return d == Math.rint(d) ? n((long) d) : String.format(Locale.ROOT, "%.1f", d);
  }

  static String n(Object v) {
    if (v instanceof Number num) {
      return String.format(Locale.ROOT, "%,d", num.longValue());
    }
    return String.valueOf(v);
  }
}
