package dev.sluice.server.gateway;

import dev.sluice.core.http.JsonScan;
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
    int i = JsonScan.skipWs(s, 0);
    if (i >= n || s.charAt(i) != '{') {
      return;
    }
    i = JsonScan.skipWs(s, i + 1);
    if (i < n && s.charAt(i) == '}') {
      return;
    }
    StringBuilder key = new StringBuilder(16);
    StringBuilder value = new StringBuilder(32);
    while (i < n && s.charAt(i) == '"') {
      key.setLength(0);
      i = JsonScan.readString(s, i, key, 256);
      i = i < 0 ? -1 : JsonScan.skipWs(s, i);
      if (i < 0 || i >= n || s.charAt(i) != ':') {
        return;
      }
      i = JsonScan.skipWs(s, i + 1);
      if (i >= n) {
        return;
      }
      String k = key.toString();
      if (s.charAt(i) == '"' && wanted.containsKey(k)) {
        value.setLength(0);
        i = JsonScan.readString(s, i, value, MAX_VALUE_CHARS);
        if (i < 0) {
          return;
        }
        found.accept(k, value.toString());
      } else {
        i = JsonScan.skipValue(s, i);
        if (i < 0) {
          return;
        }
      }
      i = JsonScan.skipWs(s, i);
      if (i >= n || s.charAt(i) != ',') {
        return;
      }
      i = JsonScan.skipWs(s, i + 1);
    }
  }
}
