package dev.sluice.netty;

import dev.sluice.core.http.JsonScan;

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
    int i = JsonScan.skipWs(s, 0);
    if (i >= n || s.charAt(i) != '{') {
      return null;
    }
    i++;
    StringBuilder key = new StringBuilder(16);
    while (true) {
      i = JsonScan.skipWs(s, i);
      if (i >= n || s.charAt(i) != '"') {
        return null;
      }
      key.setLength(0);
      i = JsonScan.readString(s, i, key, field.length() + 1);
      if (i < 0) {
        return null;
      }
      i = JsonScan.skipWs(s, i);
      if (i >= n || s.charAt(i) != ':') {
        return null;
      }
      i = JsonScan.skipWs(s, i + 1);
      if (i >= n) {
        return null;
      }
      if (field.contentEquals(key)) {
        if (s.charAt(i) != '"') {
          return null;
        }
        StringBuilder value = new StringBuilder(24);
        return JsonScan.readString(s, i, value, MAX_VALUE_CHARS) < 0 ? null : value.toString();
      }
      i = JsonScan.skipValue(s, i);
      if (i < 0) {
        return null;
      }
      i = JsonScan.skipWs(s, i);
      if (i >= n || s.charAt(i) != ',') {
        return null;
      }
      i++;
    }
  }
}
