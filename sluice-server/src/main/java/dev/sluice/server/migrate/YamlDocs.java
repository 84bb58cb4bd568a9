package dev.sluice.server.migrate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The YAML documents of an import's source, as plain maps, lists and scalars. */
final class YamlDocs {

  private YamlDocs() {}

  /** Every document that is a mapping; a YAML syntax error is an IllegalArgumentException. */
  static List<Map<String, Object>> read(String text) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    options.setMaxAliasesForCollections(50);
    Yaml yaml = new Yaml(new SafeConstructor(options));
    List<Map<String, Object>> out = new ArrayList<>();
    try {
      for (Object doc : yaml.loadAll(text)) {
        Map<String, Object> m = map(doc);
        if (m != null) {
          out.add(m);
        }
      }
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(e.getMessage().replace('\n', ' '), e);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : null;
  }

  static List<Object> list(Object o) {
    return o instanceof List<?> l ? new ArrayList<>(l) : List.of();
  }

  static Map<String, Object> map(Map<String, Object> m, String key) {
    return m == null ? null : map(m.get(key));
  }

  static String string(Map<String, Object> m, String key) {
    Object o = m == null ? null : m.get(key);
    return o == null ? null : String.valueOf(o);
  }
}
