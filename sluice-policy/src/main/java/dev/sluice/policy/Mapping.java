package dev.sluice.policy;

import dev.sluice.policy.Values.Parser;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * A mapping of the document, checked for unknown and duplicate keys: a typo that silently
 * disables a limit is the worst kind of bug a rate limiter can have.
 */
final class Mapping {

  final Walk walk;
  final String path;
  final Node node;
  final List<String> keys;
  final Map<String, NodeTuple> fields = new LinkedHashMap<>();

  private Mapping(Walk walk, Node node, String path, List<String> keys) {
    this.walk = walk;
    this.node = node;
    this.path = path;
    this.keys = keys;
  }

  /**
   * The mapping at {@code node} whose keys must be among {@code allowed} (null: any); an empty
   * one when {@code node} is absent or null; null (after reporting) when it is not a mapping.
   */
  static Mapping of(Walk walk, Node node, String path, List<String> allowed, String what) {
    if (node == null) {
      return new Mapping(walk, null, path, allowed);
    }
    if (!(node instanceof MappingNode m)) {
      if (node instanceof ScalarNode s && s.getTag().equals(Tag.NULL)) {
        return new Mapping(walk, node, path, allowed);
      }
      walk.error(node, path, Values.describe(node), what);
      return null;
    }
    Mapping obj = new Mapping(walk, node, path, allowed);
    for (NodeTuple t : m.getValue()) {
      Node k = t.getKeyNode();
      if (!(k instanceof ScalarNode ks)) {
        walk.error(k, path, Values.describe(k), "string keys");
        continue;
      }
      String key = ks.getValue();
      if (allowed != null && !allowed.contains(key)) {
        String hint = Values.suggest(key, allowed);
        walk.error(k, obj.path(key), "unknown key",
            (hint == null ? "" : "did you mean '" + hint + "'? ") + "one of "
                + String.join(", ", allowed));
        continue;
      }
      if (obj.fields.put(key, t) != null) {
        walk.error(k, obj.path(key), "appears twice", "each key once");
      }
    }
    return obj;
  }

  /** The section {@code key} of this mapping, itself a mapping with {@code keys}. */
  Mapping section(String key, List<String> keys, String what) {
    return of(walk, node(key), key, keys, what);
  }

  String path(String key) {
    String k = key.matches("[A-Za-z0-9_-]+") ? key : "\"" + key + "\"";
    return path.isEmpty() ? k : path + "." + k;
  }

  Node node(String key) {
    NodeTuple t = fields.get(key);
    return t == null ? null : t.getValueNode();
  }

  boolean has(String key) {
    return fields.containsKey(key);
  }

  <T> T get(String key, String expected, Parser<T> parser, T dflt) {
    Node n = node(key);
    if (n == null) {
      return dflt;
    }
    T v = walk.scalar(n, path(key), expected, parser);
    return v == null ? dflt : v;
  }

  /** A required value: reported as missing when absent. */
  <T> T required(String key, String expected, Parser<T> parser) {
    if (!has(key)) {
      walk.error(node, path(key), "missing", expected);
      return null;
    }
    return get(key, expected, parser, null);
  }

  /** A list: a YAML sequence, or a scalar with comma-separated items (for variables). */
  <T> List<T> list(String key, String expected, Parser<T> item, List<T> dflt) {
    Node n = node(key);
    if (n == null) {
      return dflt;
    }
    String p = path(key);
    if (n instanceof SequenceNode seq) {
      List<T> out = new ArrayList<>();
      int i = 0;
      for (Node element : seq.getValue()) {
        T v = walk.scalar(element, p + "[" + i++ + "]", expected, item);
        if (v != null) {
          out.add(v);
        }
      }
      return out;
    }
    if (n instanceof ScalarNode) {
      List<T> v = walk.scalar(n, p, "a list of " + expected, text -> {
        List<T> out = new ArrayList<>();
        for (String part : text.split(",")) {
          if (!part.isBlank()) {
            out.add(item.parse(part.trim()));
          }
        }
        return out;
      });
      return v == null ? dflt : v;
    }
    walk.error(n, p, Values.describe(n), "a list of " + expected);
    return dflt;
  }
}
