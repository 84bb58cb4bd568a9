package dev.sluice.policy;

import dev.sluice.core.http.Json;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/** Renders an effective policy tree (maps, lists, strings, numbers, booleans) as JSON or YAML. */
public final class PolicyFormat {

  private PolicyFormat() {}

  /** Block-style YAML that {@link PolicyLoader} reads back to the same policy. */
  public static String toYaml(Map<String, Object> tree) {
    DumperOptions options = new DumperOptions();
    options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    options.setIndent(2);
    options.setIndicatorIndent(0);
    options.setWidth(100);
    options.setSplitLines(false);
    return new Yaml(options).dump(copy(tree));
  }

  /** A deep copy in which no list or map is shared, so the YAML has no anchors. */
  private static Object copy(Object v) {
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new java.util.LinkedHashMap<>();
      m.forEach((k, x) -> out.put(String.valueOf(k), copy(x)));
      return out;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new java.util.ArrayList<>();
      l.forEach(x -> out.add(copy(x)));
      return out;
    }
    return v;
  }

  /** Compact JSON, keys in document order. */
  public static String toJson(Object tree) {
    StringBuilder sb = new StringBuilder();
    write(sb, tree);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof List<?> l) {
      sb.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        write(sb, l.get(i));
      }
      sb.append(']');
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
      sb.append(v);
    } else if (v instanceof Double d) {
      sb.append(Json.number(d));
    } else if (v instanceof Number n) {
      sb.append(n);
    } else {
      string(sb, v.toString());
    }
  }

  /** Appends {@code s} as a JSON string literal (core's one escaper; a document, not a body). */
  public static void string(StringBuilder sb, String s) {
    Json.quote(sb, s, false);
  }
}
