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
    String[] found = new String[1];
    JsonScan.members(s, field.length() + 1, (key, i) -> {
      if (!field.contentEquals(key)) {
        return JsonScan.skipValue(s, i);
      }
      if (s.charAt(i) == '"') {
        StringBuilder value = new StringBuilder(24);
        if (JsonScan.readString(s, i, value, MAX_VALUE_CHARS) >= 0) {
          found[0] = value.toString();
        }
      }
      return -1;   // the first one decides; what follows does not matter
    });
    return found[0];
  }
}
