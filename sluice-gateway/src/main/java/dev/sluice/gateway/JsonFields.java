package dev.sluice.gateway;

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
    StringBuilder value = new StringBuilder(32);
    JsonScan.members(s, 256, (key, i) -> {
      String k = key.toString();
      if (s.charAt(i) != '"' || !wanted.containsKey(k)) {
        return JsonScan.skipValue(s, i);
      }
      value.setLength(0);
      int next = JsonScan.readString(s, i, value, MAX_VALUE_CHARS);
      if (next >= 0) {
        found.accept(k, value.toString());
      }
      return next;
    });
  }
}
