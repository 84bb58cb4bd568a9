package dev.sluice.redis;

import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The key layout: {@code prefix<rule>:{<identity>}} holds a rule's state, a sliding log adds
 * {@code :<n>}, leases {@code :z}, cooldowns {@code :c}, reservations of a rule counted on
 * responses {@code :p}. A rule's limits share one key, hence one
 * slot; rules keyed on the same identity (a route's rule and the global per-address backstop)
 * share a slot too, so their check is one script call on a cluster.
 */
final class Keys {

  private final String prefix;
  private final boolean cluster;

  Keys(String prefix, boolean cluster) {
    this.prefix = prefix;
    this.cluster = cluster;
  }

  String prefix() {
    return prefix;
  }

  boolean cluster() {
    return cluster;
  }

  /**
   * The rule's key: the prefix, the rule name, then the identity part as a hash tag. Core keys
   * are {@code <escaped rule>:<escaped values>}; the rule name holds no ':'.
   */
  String rule(String key) {
    String escaped = escape(key);
    int colon = escaped.indexOf(':');
    if (colon < 0) {
      return prefix + "{" + escaped + "}";
    }
    return prefix + escaped.substring(0, colon + 1) + "{" + escaped.substring(colon + 1) + "}";
  }

  String lease(String key) {
    return rule(key) + ":z";
  }

  String cooldown(String key) {
    return rule(key) + ":c";
  }

  String reserved(String key) {
    return rule(key) + ":p";
  }

  /**
   * Keys from the core are already escaped (no braces); any other caller's braces are
   * percent-encoded behind a leading '~', so no input can choose a hash slot. Injective: an
   * unescaped key never starts with '~'.
   */
  static String escape(String key) {
    if (!key.isEmpty() && key.indexOf('{') < 0 && key.indexOf('}') < 0 && key.charAt(0) != '~') {
      return key;
    }
    StringBuilder sb = new StringBuilder(key.length() + 8).append('~');
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      switch (c) {
        case '%' -> sb.append("%25");
        case '{' -> sb.append("%7B");
        case '}' -> sb.append("%7D");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }

  /** Indices of {@code ruleKeys} (already laid out) per hash slot; one group off a cluster. */
  List<List<Integer>> bySlot(List<String> ruleKeys) {
    int n = ruleKeys.size();
    if (!cluster || n == 1) {
      List<Integer> all = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        all.add(i);
      }
      return List.of(all);
    }
    Map<Integer, List<Integer>> slots = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      slots.computeIfAbsent(SlotHash.getSlot(ruleKeys.get(i)), s -> new ArrayList<>()).add(i);
    }
    return new ArrayList<>(slots.values());
  }
}
