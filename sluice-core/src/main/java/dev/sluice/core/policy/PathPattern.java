package dev.sluice.core.policy;

import dev.sluice.core.internal.Checks;


/**
 * A path glob: {@code *} matches within one segment, {@code **} matches any number of segments
 * (including none, so {@code /api/**} matches {@code /api}), everything else literally.
 */
final class PathPattern {

  private final String source;
  private final String[] segments;
  /** Per segment: true when it has no {@code *} (compared as a whole, not globbed). */
  private final boolean[] literal;
  private final boolean ignoreCase;

  private PathPattern(String source, String[] segments, boolean ignoreCase) {
    this.source = source;
    this.segments = segments;
    this.literal = new boolean[segments.length];
    for (int i = 0; i < segments.length; i++) {
      literal[i] = segments[i].indexOf('*') < 0;
    }
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

  /**
   * Matches a path normalised by {@link RequestTarget}, read in place: a segment is the text
   * between two slashes, and an empty one (a trailing slash) ends the path. No string is made.
   */
  boolean matches(String path) {
    return match(path, skipSlashes(path, 0), 0);
  }

  /** {@code pos}: where the path's next segment starts ({@code path.length()} when none is left). */
  private boolean match(String path, int pos, int s) {
    int n = path.length();
    if (s == segments.length) {
      return pos >= n;
    }
    if (segments[s].equals("**")) {
      if (s == segments.length - 1) {
        return true;   // a last "**" matches whatever is left, nothing included
      }
      for (int q = pos; ; ) {
        if (match(path, q, s + 1)) {
          return true;
        }
        if (q >= n) {
          return false;
        }
        int slash = path.indexOf('/', q);
        q = slash < 0 ? n : skipSlashes(path, slash);
      }
    }
    if (pos >= n) {
      return false;
    }
    int end = path.indexOf('/', pos);
    if (end < 0) {
      end = n;
    }
    String seg = segments[s];
    boolean same = literal[s]
        ? end - pos == seg.length() && (ignoreCase ? sameIgnoringCase(seg, path, pos)
            : path.startsWith(seg, pos))
        : glob(seg, path, pos, end, ignoreCase);
    return same && match(path, skipSlashes(path, end), s + 1);
  }

  private static int skipSlashes(String path, int i) {
    while (i < path.length() && path.charAt(i) == '/') {
      i++;
    }
    return i;
  }

  /** Whether {@code text[from, to)} matches the glob {@code pattern} ({@code *}: any run). */
  private static boolean glob(String pattern, String text, int from, int to,
      boolean ignoreCase) {
    int p = 0;
    int t = from;
    int star = -1;
    int mark = 0;
    while (t < to) {
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

  /** {@code pattern} against as many characters of {@code text} from {@code from}, ASCII case. */
  private static boolean sameIgnoringCase(String pattern, String text, int from) {
    for (int i = 0; i < pattern.length(); i++) {
      if (!same(pattern.charAt(i), text.charAt(from + i), true)) {
        return false;
      }
    }
    return true;
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

  @Override
  public String toString() {
    return source;
  }
}
