package dev.sluice.core.http;

import java.util.Locale;

/**
 * The one JSON string escaper of the project: response bodies, WebSocket error messages, the
 * effective policy and admin documents all write strings through it (two copies had drifted).
 * Besides what JSON requires it escapes U+2028/U+2029 (line ends to JavaScript), and in response
 * bodies also {@code < > &}, so a body sniffed as HTML or pasted into a script cannot end the
 * element; documents an operator reads keep them as they are.
 */
public final class Json {

  private Json() {}

  /** Appends {@code s} as a JSON string literal, {@code < > &} escaped (response bodies). */
  public static StringBuilder quote(StringBuilder sb, String s) {
    return quote(sb, s, true);
  }

  /** Appends {@code s} as a JSON string literal; {@code < > &} escaped when {@code htmlSafe}. */
  public static StringBuilder quote(StringBuilder sb, String s, boolean htmlSafe) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029
              || (htmlSafe && (c == '<' || c == '>' || c == '&'))) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"');
  }

  /** {@code s} as a JSON string literal. */
  public static String quote(String s) {
    return quote(new StringBuilder(s.length() + 2), s).toString();
  }

  /** A number as JSON: whole values without a fraction ({@code 10}, not {@code 10.0}). */
  public static String number(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }
}
