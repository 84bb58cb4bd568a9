package dev.sluice.netty;

/**
 * Reads one top-level string field of a JSON object, such as {@code type} in
 * {@code {"type":"SEND_REACTION","emoji":"x"}}, without building a tree. Linear in the input, no
 * recursion, no allocation beyond the names it compares; nested objects and arrays are skipped.
 * Malformed or truncated input (the first fragment of a longer message) gives null unless the
 * field was complete before the damage.
 */
final class ActionField {

  /** Longest action name kept; longer values are cut to this many characters. */
  static final int MAX_VALUE_CHARS = 128;

  private ActionField() {}

  static String read(CharSequence s, String field) {
    int n = s.length();
    int i = skipWs(s, 0);
    if (i >= n || s.charAt(i) != '{') {
      return null;
    }
    i++;
    StringBuilder key = new StringBuilder(16);
    while (true) {
      i = skipWs(s, i);
      if (i >= n || s.charAt(i) != '"') {
        return null;
      }
      key.setLength(0);
      i = readString(s, i, key, field.length() + 1);
      if (i < 0) {
        return null;
      }
      i = skipWs(s, i);
      if (i >= n || s.charAt(i) != ':') {
        return null;
      }
      i = skipWs(s, i + 1);
      if (i >= n) {
        return null;
      }
      if (field.contentEquals(key)) {
        if (s.charAt(i) != '"') {
          return null;
        }
        StringBuilder value = new StringBuilder(24);
        return readString(s, i, value, MAX_VALUE_CHARS) < 0 ? null : value.toString();
      }
      i = skipValue(s, i);
      if (i < 0) {
        return null;
      }
      i = skipWs(s, i);
      if (i >= n || s.charAt(i) != ',') {
        return null;
      }
      i++;
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

  /** Reads the string at {@code i} (a quote) into {@code out}, up to {@code max} chars; -1 if bad. */
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
          depth--;
          if (depth == 0) {
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
