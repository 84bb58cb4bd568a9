package dev.sluice.core.http;

/**
 * The pieces of a streaming JSON reader that the adapters' field readers share: whitespace,
 * strings with their escapes, and skipping a value of any kind. Indices in, indices out, no tree,
 * no recursion, no allocation beyond the caller's buffer; -1 marks malformed or truncated input.
 */
public final class JsonScan {

  private JsonScan() {}

  /** The index of the first non-whitespace char at or after {@code i}. */
  public static int skipWs(CharSequence s, int i) {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
        break;
      }
      i++;
    }
    return i;
  }

  /**
   * Reads the string starting at {@code i} (a quote) into {@code out} (null to skip it), escapes
   * decoded, keeping at most {@code max} chars; the index after its closing quote, or -1 if bad.
   */
  public static int readString(CharSequence s, int i, StringBuilder out, int max) {
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

  /**
   * Skips the value at {@code i} (a string, a number or literal, or a nested object or array,
   * without recursion); the index after it, or -1 if bad or truncated.
   */
  public static int skipValue(CharSequence s, int i) {
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

  /** What {@link #members} does with one member of an object. */
  @FunctionalInterface
  public interface Member {
    /**
     * The member named {@code key} (at most the walk's {@code maxKey} chars; the builder is
     * reused for the next member), whose value starts at {@code i}: returns the index after the
     * value (read or {@link #skipValue skipped}), or -1 to stop the walk (bad, or done).
     */
    int value(StringBuilder key, int i);
  }

  /**
   * Walks the top-level members of the object that {@code s} holds, in order, handing each to
   * {@code member}: the index after the closing brace, or -1 when the input is malformed or
   * truncated or {@code member} stopped (what it was handed before then stands).
   */
  public static int members(CharSequence s, int maxKey, Member member) {
    int n = s.length();
    int i = skipWs(s, 0);
    if (i >= n || s.charAt(i) != '{') {
      return -1;
    }
    i = skipWs(s, i + 1);
    if (i < n && s.charAt(i) == '}') {
      return i + 1;
    }
    StringBuilder key = new StringBuilder(16);
    while (i < n && s.charAt(i) == '"') {
      key.setLength(0);
      i = readString(s, i, key, maxKey);
      i = i < 0 ? -1 : skipWs(s, i);
      if (i < 0 || i >= n || s.charAt(i) != ':') {
        return -1;
      }
      i = skipWs(s, i + 1);
      if (i >= n) {
        return -1;
      }
      i = member.value(key, i);
      if (i < 0) {
        return -1;
      }
      i = skipWs(s, i);
      if (i < n && s.charAt(i) == '}') {
        return i + 1;
      }
      if (i >= n || s.charAt(i) != ',') {
        return -1;
      }
      i = skipWs(s, i + 1);
    }
    return -1;
  }
}
