package dev.sluice.server.replay;

import java.util.ArrayList;
import java.util.List;

/** Lines that did not parse: all counted, the first few kept with where and why. */
final class Problems {

  static final int KEPT = 5;
  private static final int SNIPPET = 120;

  /** One line that did not parse. */
  record Bad(String input, long line, String reason, String text) {
    @Override
    public String toString() {
      return input + ":" + line + ": " + reason + (text.isEmpty() ? "" : ": " + text);
    }
  }

  private long count;
  private final List<Bad> first = new ArrayList<>();

  void bad(String input, long line, String reason, byte[] b, int s, int e) {
    count++;
    if (first.size() < KEPT) {
      int n = Math.min(e - s, SNIPPET);
      String t = b == null ? "" : new String(b, s, n, java.nio.charset.StandardCharsets.UTF_8)
          .replaceAll("\\p{Cntrl}", "?") + (e - s > SNIPPET ? "..." : "");
      first.add(new Bad(input, line, reason, t));
    }
  }

  long count() {
    return count;
  }

  List<Bad> first() {
    return first;
  }

  void addAll(Problems other) {
    count += other.count;
    for (Bad b : other.first) {
      if (first.size() < KEPT) {
        first.add(b);
      }
    }
  }
}
