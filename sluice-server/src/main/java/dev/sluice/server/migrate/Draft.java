package dev.sluice.server.migrate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The Sluice policy an import builds, written out as a commented policy file. Every line whose
 * meaning differs from the source carries a {@code # differs:} comment right above it; where
 * each part came from is a plain comment above the part.
 */
final class Draft {

  /** A directive, annotation or key the import could not translate. */
  record Problem(String where, String what, String reason) {
    @Override
    public String toString() {
      return where + ": " + what + ": cannot translate: " + reason;
    }
  }

  /** One line of a section: its YAML (without indentation) and, if so, how it differs. */
  record Line(String yaml, String differs) {}

  /** A rule: where it came from, its lines, its limits (flow mappings). */
  static final class Rule {
    final String name;
    final List<String> notes = new ArrayList<>();
    final List<Line> lines = new ArrayList<>();
    final List<Line> limits = new ArrayList<>();

    Rule(String name) {
      this.name = name;
    }

    /** A comment above the rule, once however often it is given. */
    Rule note(String text) {
      if (!notes.contains(text)) {
        notes.add(text);
      }
      return this;
    }

    Rule line(String yaml, String differs) {
      lines.add(new Line(yaml, differs));
      return this;
    }

    Rule limit(String yaml, String differs) {
      limits.add(new Line(yaml, differs));
      return this;
    }
  }

  /** A route: where it came from and its lines. */
  static final class Route {
    final List<String> notes = new ArrayList<>();
    final List<Line> lines = new ArrayList<>();

    Route line(String yaml, String differs) {
      lines.add(new Line(yaml, differs));
      return this;
    }
  }

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9/_.][A-Za-z0-9/_.:*@-]*");
  private static final int WIDTH = 100;

  final List<String> header = new ArrayList<>();
  final List<Problem> problems = new ArrayList<>();
  final List<Line> top = new ArrayList<>();
  final List<Line> trust = new ArrayList<>();
  final List<String> trustNotes = new ArrayList<>();
  final Map<String, Line> dimensions = new LinkedHashMap<>();
  final Map<String, Rule> rules = new LinkedHashMap<>();
  final List<Route> routes = new ArrayList<>();
  final List<String> storeNotes = new ArrayList<>();
  final List<Line> store = new ArrayList<>();
  /** Envoy's descriptors, already as policy YAML lines (under {@code domains:}). */
  final List<String> domains = new ArrayList<>();

  void problem(String where, String what, String reason) {
    problems.add(new Problem(where, what, reason));
  }

  Rule rule(String name) {
    return rules.computeIfAbsent(name, Rule::new);
  }

  Route route() {
    Route r = new Route();
    routes.add(r);
    return r;
  }

  /** A YAML scalar: plain where that reads back the same, else double-quoted. */
  static String scalar(String s) {
    if (PLAIN.matcher(s).matches() && !s.equals("true") && !s.equals("false")
        && !s.equals("null") && !s.equals("yes") && !s.equals("no") && !s.startsWith("*")) {
      return s;
    }
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\x%02x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  /** A YAML flow list of scalars. */
  static String list(List<String> items) {
    List<String> out = new ArrayList<>();
    for (String i : items) {
      out.add(scalar(i));
    }
    return "[" + String.join(", ", out) + "]";
  }

  /** The policy file. */
  String render() {
    StringBuilder b = new StringBuilder();
    for (String h : header) {
      comment(b, "", h);
    }
    b.append("version: 1\n");
    for (Line l : top) {
      line(b, "", l);
    }
    if (!trust.isEmpty()) {
      b.append('\n');
      for (String n : trustNotes) {
        comment(b, "", n);
      }
      b.append("trust:\n");
      for (Line l : trust) {
        line(b, "  ", l);
      }
    }
    if (!dimensions.isEmpty()) {
      b.append("\ndimensions:\n");
      for (Map.Entry<String, Line> d : dimensions.entrySet()) {
        line(b, "  ", new Line(d.getKey() + ": " + d.getValue().yaml(), d.getValue().differs()));
      }
    }
    if (!rules.isEmpty()) {
      b.append("\nrules:\n");
      for (Rule r : rules.values()) {
        for (String n : r.notes) {
          comment(b, "  ", n);
        }
        b.append("  ").append(scalar(r.name)).append(":\n");
        for (Line l : r.lines) {
          line(b, "    ", l);
        }
        b.append("    limits:\n");
        for (Line l : r.limits) {
          line(b, "      ", new Line("- " + l.yaml(), l.differs()));
        }
      }
    }
    if (!routes.isEmpty()) {
      b.append("\n# Tried in order, the first match wins: exact paths, then longer prefixes first.\n");
      b.append("routes:\n");
      for (Route r : routes) {
        for (String n : r.notes) {
          comment(b, "  ", n);
        }
        boolean first = true;
        for (Line l : r.lines) {
          line(b, first ? "  " : "    ", new Line((first ? "- " : "") + l.yaml(), l.differs()));
          first = false;
        }
      }
    }
    if (!store.isEmpty() || !storeNotes.isEmpty()) {
      b.append('\n');
      for (String n : storeNotes) {
        comment(b, "", n);
      }
      if (!store.isEmpty()) {
        b.append("store:\n");
        for (Line l : store) {
          line(b, "  ", l);
        }
      }
    }
    if (!domains.isEmpty()) {
      b.append("\ndomains:\n");
      for (String d : domains) {
        b.append(d).append('\n');
      }
    }
    return b.toString();
  }

  private static void line(StringBuilder b, String indent, Line l) {
    if (l.differs() != null) {
      comment(b, indent, "differs: " + l.differs());
    }
    b.append(indent).append(l.yaml()).append('\n');
  }

  /** {@code text} as comment lines of at most {@link #WIDTH} characters. */
  static void comment(StringBuilder b, String indent, String text) {
    if (text.isEmpty()) {
      b.append(indent).append("#\n");
      return;
    }
    String prefix = indent + "# ";
    String cont = indent + "#   ";
    StringBuilder cur = new StringBuilder(prefix);
    boolean fresh = true;
    for (String word : text.split(" ")) {
      if (!fresh && cur.length() + 1 + word.length() > WIDTH) {
        b.append(cur).append('\n');
        cur = new StringBuilder(cont);
        fresh = true;
      }
      if (!fresh) {
        cur.append(' ');
      }
      cur.append(word);
      fresh = false;
    }
    b.append(cur).append('\n');
  }
}
