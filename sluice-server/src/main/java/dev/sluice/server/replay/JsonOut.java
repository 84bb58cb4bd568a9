package dev.sluice.server.replay;

import dev.sluice.core.http.Json;
import java.util.List;
import java.util.Map;

/**
 * Writes maps, lists, strings, numbers and booleans as JSON, with {@code < > &} escaped so the
 * text can sit inside an HTML {@code <script>} element as it is.
 */
final class JsonOut {

  private JsonOut() {}


  /** Compact, with {@code < > &} escaped, for inside an HTML {@code <script>} element. */
  static String write(Object value, boolean pretty) {
    return write(value, pretty, true);
  }

  static String write(Object value, boolean pretty, boolean htmlSafe) {
    StringBuilder sb = new StringBuilder(4096);
    new JsonOut.Writer(htmlSafe).write(sb, value, pretty ? 0 : -1);
    return sb.toString();
  }

  private record Writer(boolean htmlSafe) {

  private void write(StringBuilder sb, Object v, int indent) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String s) {
      Json.quote(sb, s, htmlSafe);
    } else if (v instanceof Boolean b) {
      sb.append(b);
    } else if (v instanceof Double d) {
      sb.append(Json.number(Math.round(d * 1000) / 1000.0));
    } else if (v instanceof Float f) {
      sb.append(Json.number(Math.round(f * 1000) / 1000.0));
    } else if (v instanceof Number n) {
      sb.append(n.longValue());
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        newline(sb, indent < 0 ? -1 : indent + 1);
        Json.quote(sb, String.valueOf(e.getKey()), htmlSafe).append(indent >= 0 ? ": " : ":");
        write(sb, e.getValue(), indent < 0 ? -1 : indent + 1);
      }
      if (!m.isEmpty()) {
        newline(sb, indent);
      }
      sb.append('}');
    } else if (v instanceof List<?> l) {
      boolean flat = l.isEmpty() || !(l.get(0) instanceof Map);
      sb.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        if (!flat) {
          newline(sb, indent < 0 ? -1 : indent + 1);
        }
        write(sb, l.get(i), indent < 0 ? -1 : indent + 1);
      }
      if (!flat && !l.isEmpty()) {
        newline(sb, indent);
      }
      sb.append(']');
    } else if (v instanceof long[] a) {
      sb.append('[');
      for (int i = 0; i < a.length; i++) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(a[i]);
      }
      sb.append(']');
    } else {
      Json.quote(sb, v.toString(), htmlSafe);
    }
  }

  }

  private static void newline(StringBuilder sb, int indent) {
    if (indent >= 0) {
      sb.append('\n');
      for (int i = 0; i < indent; i++) {
        sb.append("  ");
      }
    }
  }
}
