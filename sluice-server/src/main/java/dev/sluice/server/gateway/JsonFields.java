package dev.sluice.server.gateway;

import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Every string value of the wanted top-level fields of a JSON object, in order, without building
 * a tree: {@code {"name":"x","age":3,"name":"y"}} reports name twice, because a parser that keeps
 * the last duplicate would otherwise be handed a value that was never checked. Nested values are
 * skipped, escapes decoded. Reading stops at the first malformed token; what was reported before
 * it stands (the upstream refuses malformed JSON itself).
 */
final class JsonFields {

  /**
   * Longest value kept, in chars. Longer values are cut here, which is still longer than any
   * name surface accepts (256 clusters, at most 4,112 units), so they are refused as too long.
   */
  static final int MAX_VALUE_CHARS = 8192;

  private JsonFields() {}

  static void forEach(CharSequence s, Map<String, ?> wanted, BiConsumer<String, String> found) {
    int n = s.length();
    int i = skipWs(s, 0);
    if (i >= n || s.charAt(i) != '{') {
      return;
    }
    i = skipWs(s, i + 1);
    if (i < n && s.charAt(i) == '}') {
      return;
    }
    StringBuilder key = new StringBuilder(16);
    StringBuilder value = new StringBuilder(32);
    while (i < n && s.charAt(i) == '"') {
      key.setLength(0);
      i = readString(s, i, key, 256);
      i = i < 0 ? -1 : skipWs(s, i);
      if (i < 0 || i >= n || s.charAt(i) != ':') {
        return;
      }
      i = skipWs(s, i + 1);
      if (i >= n) {
        return;
      }
      String k = key.toString();
      if (s.charAt(i) == '"' && wanted.containsKey(k)) {
        value.setLength(0);
        i = readString(s, i, value, MAX_VALUE_CHARS);
        if (i < 0) {
          return;
        }
        found.accept(k, value.toString());
      } else {
        i = skipValue(s, i);
        if (i < 0) {
          return;
        }
      }
      i = skipWs(s, i);
      if (i >= n || s.charAt(i) != ',') {
        return;
      }
      i = skipWs(s, i + 1);
    }
  }

  private static int skipWs(CharSequence s, int i) {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
        break;
      }
      i++;
    }
    return i;
  }

  /** Reads the string at {@code i} (a quote) into {@code out}, up to {@code max}; -1 if bad. */
  private static int readString(CharSequence s, int i, StringBuilder out, int max) {
    int n = s.length();
    i++;
    while (i < n) {
      char c = s.charAt(i++);
      if (c == '"') {
        return i;
      }
      if (c < 0x20) {
        return -1;
      }
      if (c == '\\') {
        if (i >= n) {
          return -1;
        }
        char e = s.charAt(i++);
        switch (e) {
          case '"', '\\', '/' -> c = e;
          case 'b' -> c = '\b';
          case 'f' -> c = '\f';
          case 'n' -> c = '\n';
          case 'r' -> c = '\r';
          case 't' -> c = '\t';
          case 'u' -> {
            if (i + 4 > n) {
              return -1;
            }
            int cp = 0;
            for (int k = 0; k < 4; k++) {
              int d = Character.digit(s.charAt(i++), 16);
              if (d < 0) {
                return -1;
              }
              cp = cp * 16 + d;
            }
            c = (char) cp;
          }
          default -> {
            return -1;
          }
        }
      }
      if (out != null && out.length() < max) {
        out.append(c);
      }
    }
    return -1;
  }

  private static int skipValue(CharSequence s, int i) {
    int n = s.length();
    char c = s.charAt(i);
    if (c == '"') {
      return readString(s, i, null, 0);
    }
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i < n) {
        c = s.charAt(i);
        if (c == '"') {
          i = readString(s, i, null, 0);
          if (i < 0) {
            return -1;
          }
          continue;
        }
        if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) {
            return i + 1;
          }
        }
        i++;
      }
      return -1;
    }
    int start = i;
    while (i < n) {
      c = s.charAt(i);
      if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        break;
      }
      i++;
    }
    return i == start || i >= n ? -1 : i;
  }
}
