package dev.sluice.server;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scraped text in the form the tests were written against (before Micrometer rendered it):
 * labels in the order rule, outcome, surface, reason, then the rest, and whole values without
 * {@code .0}. Label order and {@code 1.0} mean nothing to Prometheus; this keeps the tests' exact
 * expectations readable. {@code MetricsFormatTest} parses the real output with a real parser.
 */
public final class Prom {

  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");
  private static final List<String> ORDER = List.of("rule", "outcome", "surface", "reason");

  private Prom() {}

  public static String canon(String text) {
    StringBuilder out = new StringBuilder();
    for (String line : text.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (line.startsWith("#") || !m.matches()) {
        out.append(line).append('\n');
        continue;
      }
      out.append(m.group(1));
      if (m.group(2) != null && !m.group(2).isEmpty()) {
        List<String[]> labels = new ArrayList<>();
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.add(new String[] {l.group(1), l.group(2)});
        }
        labels.sort((a, b) -> Integer.compare(rank(a[0]), rank(b[0])));
        out.append('{');
        for (int i = 0; i < labels.size(); i++) {
          out.append(i > 0 ? "," : "").append(labels.get(i)[0]).append("=\"")
              .append(labels.get(i)[1]).append('"');
        }
        out.append('}');
      }
      String v = m.group(3);
      try {
        double d = Double.parseDouble(v);
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
          v = Long.toString((long) d);
        }
      } catch (NumberFormatException e) {
        // NaN, +Inf: as written
      }
      out.append(' ').append(v).append('\n');
    }
    return out.toString();
  }

  private static int rank(String label) {
    int i = ORDER.indexOf(label);
    return i < 0 ? ORDER.size() : i;
  }
}
