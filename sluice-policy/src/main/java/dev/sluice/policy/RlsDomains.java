package dev.sluice.policy;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code domains:} section: descriptor trees by domain, matched as envoyproxy/ratelimit
 * matches them. A request descriptor's entries walk the tree one level per entry (exact value,
 * then the longest prefix value, then the key alone); the descriptor is limited only when every
 * entry matched and the last node has a limit. Anything else is "no limit".
 */
public final class RlsDomains {

  private static final RlsDomains NONE = new RlsDomains(Map.of());

  private final Map<String, RlsDescriptor> roots;

  RlsDomains(Map<String, RlsDescriptor> roots) {
    this.roots = Map.copyOf(roots);
  }

  public static RlsDomains none() {
    return NONE;
  }

  /** Entries of one request descriptor, read without copying. */
  public interface Entries {
    int size();

    String key(int i);

    String value(int i);
  }

  /** True when {@code domain} is configured. */
  public boolean has(String domain) {
    return roots.containsKey(domain);
  }

  public boolean isEmpty() {
    return roots.isEmpty();
  }

  /** The domains, in no particular order. */
  public java.util.Set<String> names() {
    return roots.keySet();
  }

  /** The node limiting {@code entries} in {@code domain}, or null when none does. */
  public RlsDescriptor match(String domain, Entries entries) {
    RlsDescriptor node = roots.get(domain);
    int n = entries.size();
    for (int i = 0; node != null && i < n; i++) {
      node = node.child(entries.key(i), entries.value(i));
    }
    return node != null && n > 0 && node.hasLimit() ? node : null;
  }

  /** Every domain's top-level nodes, for the effective policy. */
  Map<String, Map<String, RlsDescriptor>> tree() {
    Map<String, Map<String, RlsDescriptor>> out = new LinkedHashMap<>();
    roots.forEach((d, root) -> out.put(d, root.children()));
    return out;
  }
}
