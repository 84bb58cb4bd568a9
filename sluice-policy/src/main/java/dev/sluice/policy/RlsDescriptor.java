package dev.sluice.policy;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One node of a {@code domains:} descriptor tree (envoyproxy/ratelimit's shape): a key, an
 * optional value (exact, or a prefix when written with a trailing {@code *}), what it limits, and
 * the nodes under it. Immutable once loaded.
 *
 * <p>The counter of a matched node is keyed by the node (its rule's name) and by the request's
 * actual entries, so {@code key: remote_address} without a value counts each address apart, and
 * {@code value: "/api*"} each path apart, as envoyproxy/ratelimit does.
 */
public final class RlsDescriptor {

  /** The most descriptors one request may carry; a rule per position is built on first use. */
  public static final int MAX_DESCRIPTORS = 64;

  private final String key;
  private final String value;
  private final boolean prefix;
  private final String path;
  private final Map<String, RlsDescriptor> exact;
  private final Map<String, RlsDescriptor> byKey;
  private final List<RlsDescriptor> wildcards;
  private final Rule rule;
  private final List<Limit> limits;
  private final String name;
  private final boolean unlimited;
  private final boolean blocked;
  private final boolean shadow;
  private final boolean detailedMetric;
  private final List<String> replaces;
  private final String unit;
  private final long requestsPerUnit;
  private final AtomicReferenceArray<Rule> byPosition =
      new AtomicReferenceArray<>(MAX_DESCRIPTORS);

  RlsDescriptor(String key, String value, String path, Map<String, RlsDescriptor> children,
      Rule rule, List<Limit> limits, String name, boolean unlimited, boolean blocked,
      boolean shadow, boolean detailedMetric, List<String> replaces, String unit,
      long requestsPerUnit) {
    this.key = key;
    this.prefix = value != null && value.endsWith("*");
    this.value = prefix ? value.substring(0, value.length() - 1) : value;
    this.path = path;
    this.rule = rule;
    this.limits = List.copyOf(limits);
    this.name = name;
    this.unlimited = unlimited;
    this.blocked = blocked;
    this.shadow = shadow;
    this.detailedMetric = detailedMetric;
    this.replaces = List.copyOf(replaces);
    this.unit = unit;
    this.requestsPerUnit = requestsPerUnit;
    Map<String, RlsDescriptor> ex = new java.util.HashMap<>();
    Map<String, RlsDescriptor> bk = new java.util.HashMap<>();
    java.util.List<RlsDescriptor> wc = new java.util.ArrayList<>();
    for (RlsDescriptor c : children.values()) {
      if (c.value == null) {
        bk.put(c.key, c);
      } else if (c.prefix) {
        wc.add(c);
      } else {
        ex.put(entryKey(c.key, c.value), c);
      }
    }
    this.exact = Map.copyOf(ex);
    this.byKey = Map.copyOf(bk);
    this.wildcards = List.copyOf(wc);
  }

  static String entryKey(String key, String value) {
    return key + '\u0000' + value;
  }

  /** The child matching one entry: exact value first, then the longest prefix, then key only. */
  RlsDescriptor child(String k, String v) {
    RlsDescriptor d = exact.get(entryKey(k, v));
    if (d != null) {
      return d;
    }
    RlsDescriptor best = null;
    for (RlsDescriptor w : wildcards) {
      if (w.key.equals(k) && v.startsWith(w.value)
          && (best == null || w.value.length() > best.value.length())) {
        best = w;
      }
    }
    return best != null ? best : byKey.get(k);
  }

  public String key() {
    return key;
  }

  /** The value as written without its {@code *}, or null for a key-only node. */
  public String value() {
    return value;
  }

  /** True for a prefix value ({@code "/api*"}). */
  public boolean prefix() {
    return prefix;
  }

  /** The node's place in the tree, like {@code messaging.message_type=marketing.to_number}. */
  public String path() {
    return path;
  }

  /** True when the node limits anything: limits, {@code unlimited} or a zero rate. */
  public boolean hasLimit() {
    return rule != null || unlimited || blocked;
  }

  /**
   * The node's rule keyed by dimension {@code "d" + position} of a request's identity, so several
   * descriptors of one request, even matching the same node, are one atomic check. Every
   * position shares the rule's name and therefore its counters.
   */
  public Rule rule(int position) {
    if (rule == null) {
      return null;
    }
    Rule r = byPosition.get(position);
    if (r == null) {
      r = rule.toBuilder().key(dimension(position)).build();
      byPosition.compareAndSet(position, null, r);
      r = byPosition.get(position);
    }
    return r;
  }

  /** The identity dimension of descriptor {@code position} of a request. */
  public static String dimension(int position) {
    return DIMENSIONS[position];
  }

  private static final String[] DIMENSIONS = new String[MAX_DESCRIPTORS];

  static {
    for (int i = 0; i < MAX_DESCRIPTORS; i++) {
      DIMENSIONS[i] = "d" + i;
    }
  }

  /** The limits (the {@code rate_limit} block's first), for the effective policy. */
  public List<Limit> limits() {
    return limits;
  }

  /** The core limits in check order; empty without limits. */
  public List<Limit> coreLimits() {
    return rule == null ? List.of() : rule.limits();
  }

  /** {@code rate_limit.name}, which {@code replaces} refers to, or null. */
  public String name() {
    return name;
  }

  public boolean unlimited() {
    return unlimited;
  }

  /** {@code requests_per_unit: 0}: every request is over the limit, nothing is counted. */
  public boolean blocked() {
    return blocked;
  }

  public boolean shadow() {
    return shadow;
  }

  public boolean detailedMetric() {
    return detailedMetric;
  }

  /** Names of other descriptors' limits this one replaces when both match one request. */
  public List<String> replaces() {
    return replaces;
  }

  /** The envoy unit of {@code rate_limit} ({@code second} ... {@code year}), or null. */
  public String unit() {
    return unit;
  }

  /** {@code rate_limit.requests_per_unit}, or -1 without a {@code rate_limit} block. */
  public long requestsPerUnit() {
    return requestsPerUnit;
  }

  public OnStoreError onStoreError() {
    return rule == null ? Rule.DEFAULT_ON_STORE_ERROR : rule.onStoreError();
  }

  Mode mode() {
    return shadow ? Mode.SHADOW : Mode.ENFORCE;
  }

  Map<String, RlsDescriptor> children() {
    Map<String, RlsDescriptor> all = new java.util.LinkedHashMap<>();
    exact.values().forEach(c -> all.put(c.path, c));
    wildcards.forEach(c -> all.put(c.path, c));
    byKey.values().forEach(c -> all.put(c.path, c));
    return all;
  }

  @Override
  public String toString() {
    return path;
  }
}
