package dev.sluice.core.policy;

import dev.sluice.core.internal.Checks;


/**
 * A path glob: {@code *} matches within one segment, {@code **} matches any number of segments
 * (including none, so {@code /api/**} matches {@code /api}), everything else literally.
 */
final class PathPattern {

  private final String source;
  private final String[] segments;

  private PathPattern(String source, String[] segments) {
    this.source = source;
    this.segments = segments;
  }

  static PathPattern parse(String pattern) {
    Checks.notNull(pattern, "path");
    if (!pattern.startsWith("/") || pattern.length() > 1024) {
      throw Checks.invalid("path", "\"" + pattern + "\"",
          "a pattern starting with '/', like \"/api/**\"");
    }
    return new PathPattern(pattern, split(pattern));
  }

  private static String[] split(String path) {
    String trimmed = path.length() > 1 && path.endsWith("/")
        ? path.substring(1, path.length() - 1) : path.substring(1);
    return trimmed.isEmpty() ? new String[0] : trimmed.split("/", -1);
  }

  /** Matches a path already normalized by {@link #normalize}. */
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
    return p < path.length && glob(segments[s], path[p]) && match(path, p + 1, s + 1);
  }

  private static boolean glob(String pattern, String text) {
    int p = 0;
    int t = 0;
    int star = -1;
    int mark = 0;
    while (t < text.length()) {
      if (p < pattern.length() && pattern.charAt(p) == text.charAt(t)) {
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

  /**
   * Splits a request path into segments the way a server resolves it, so that no spelling
   * ({@code //api}, {@code /api/./x}, {@code /x/../api}, {@code /%61pi}) slips past a pattern:
   * percent-decodes unreserved characters, drops empty and {@code .} segments, resolves
   * {@code ..}. Bounded: at most 256 segments are kept.
   */
  static String[] normalize(String rawPath) {
    String path = rawPath == null ? "/" : decodeUnreserved(rawPath);
    java.util.ArrayList<String> out = new java.util.ArrayList<>();
    int start = 0;
    int n = path.length();
    while (start <= n && out.size() < 256) {
      int end = path.indexOf('/', start);
      if (end < 0) {
        end = n;
      }
      String segment = path.substring(start, end);
      if (segment.equals("..")) {
        if (!out.isEmpty()) {
          out.remove(out.size() - 1);
        }
      } else if (!segment.isEmpty() && !segment.equals(".")) {
        out.add(segment);
      }
      start = end + 1;
    }
    return out.toArray(new String[0]);
  }

  private static String decodeUnreserved(String path) {
    if (path.indexOf('%') < 0) {
      return path;
    }
    StringBuilder sb = new StringBuilder(path.length());
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c == '%' && i + 2 < path.length()) {
        int v = Character.digit(path.charAt(i + 1), 16) * 16 + Character.digit(path.charAt(i + 2), 16);
        if (v >= 0 && isUnreserved((char) v)) {
          sb.append((char) v);
          i += 2;
          continue;
        }
      }
      sb.append(c);
    }
    return sb.toString();
  }

  private static boolean isUnreserved(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '-' || c == '.' || c == '_' || c == '~';
  }

  @Override
  public String toString() {
    return source;
  }
}
