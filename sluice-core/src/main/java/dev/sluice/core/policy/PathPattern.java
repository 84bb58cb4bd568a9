package dev.sluice.core.policy;

import dev.sluice.core.internal.Checks;


/**
 * A path glob: {@code *} matches within one segment, {@code **} matches any number of segments
 * (including none, so {@code /api/**} matches {@code /api}), everything else literally.
 */
final class PathPattern {

  private final String source;
  private final String[] segments;
  private final boolean ignoreCase;

  private PathPattern(String source, String[] segments, boolean ignoreCase) {
    this.source = source;
    this.segments = segments;
    this.ignoreCase = ignoreCase;
  }

  static PathPattern parse(String pattern) {
    return parse(pattern, false);
  }

  /** With {@code ignoreCase}, letters match in either case (ASCII only, as paths are). */
  static PathPattern parse(String pattern, boolean ignoreCase) {
    Checks.notNull(pattern, "path");
    if (!pattern.startsWith("/") || pattern.length() > 1024) {
      throw Checks.invalid("path", "\"" + pattern + "\"",
          "a pattern starting with '/', like \"/api/**\"");
    }
    return new PathPattern(pattern, split(pattern), ignoreCase);
  }

  private static String[] split(String path) {
    String trimmed = path.length() > 1 && path.endsWith("/")
        ? path.substring(1, path.length() - 1) : path.substring(1);
    return trimmed.isEmpty() ? new String[0] : trimmed.split("/", -1);
  }

  /** Matches a path split by {@link #segments}. */
  boolean matches(String[] path) {
    return match(path, 0, 0);
  }

  private boolean match(String[] path, int p, int s) {
    if (s == segments.length) {
      return p == path.length;
    }
    if (segments[s].equals("**")) {
      for (int i = p; i <= path.length; i++) {
        if (match(path, i, s + 1)) {
          return true;
        }
      }
      return false;
    }
    return p < path.length && glob(segments[s], path[p], ignoreCase)
        && match(path, p + 1, s + 1);
  }

  private static boolean glob(String pattern, String text, boolean ignoreCase) {
    int p = 0;
    int t = 0;
    int star = -1;
    int mark = 0;
    while (t < text.length()) {
      if (p < pattern.length() && pattern.charAt(p) != '*'
          && same(pattern.charAt(p), text.charAt(t), ignoreCase)) {
        p++;
        t++;
      } else if (p < pattern.length() && pattern.charAt(p) == '*') {
        star = p++;
        mark = t;
      } else if (star >= 0) {
        p = star + 1;
        t = ++mark;
      } else {
        return false;
      }
    }
    while (p < pattern.length() && pattern.charAt(p) == '*') {
      p++;
    }
    return p == pattern.length();
  }

  private static boolean same(char a, char b, boolean ignoreCase) {
    if (a == b) {
      return true;
    }
    if (!ignoreCase) {
      return false;
    }
    char la = a >= 'A' && a <= 'Z' ? (char) (a + 32) : a;
    char lb = b >= 'A' && b <= 'Z' ? (char) (b + 32) : b;
    return la == lb;
  }

  /** A pattern that matches in either case, for a case-insensitive route. */
  PathPattern ignoringCase() {
    return ignoreCase ? this : new PathPattern(source, segments, true);
  }

  /**
   * The segments of a path normalised by {@link RequestTarget} (no empty or dot segment is left
   * to resolve). Bounded: at most 256 segments are kept.
   */
  static String[] segments(String normalizedPath) {
    String path = normalizedPath == null ? "/" : normalizedPath;
    java.util.ArrayList<String> out = new java.util.ArrayList<>();
    int start = path.startsWith("/") ? 1 : 0;
    int n = path.length();
    while (start < n && out.size() < 256) {
      int end = path.indexOf('/', start);
      if (end < 0) {
        end = n;
      }
      if (end > start) {
        out.add(path.substring(start, end));
      }
      start = end + 1;
    }
    return out.toArray(new String[0]);
  }

  @Override
  public String toString() {
    return source;
  }
}
