package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.describe;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;
import static dev.sluice.policy.Values.wholeNumber;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * The {@code domains:} section, in envoyproxy/ratelimit's configuration shape so its files load
 * unchanged (a file whose top level is {@code domain:} and {@code descriptors:} is one domain),
 * plus Sluice's extensions on a descriptor: {@code limits:} (any Sluice limit, several per
 * descriptor, checked atomically) and {@code onStoreError}.
 *
 * <p>A {@code rate_limit: {unit: minute, requests_per_unit: 20}} becomes a fixed window of 20
 * per minute aligned to the epoch, as envoyproxy/ratelimit counts; {@code month} is 30 days and
 * {@code year} 365, as there. {@code requests_per_unit: 0} refuses every request without
 * counting (its "block this address" idiom).
 */
final class DomainsSection {

  static final List<String> DOMAIN_KEYS = List.of("domain", "descriptors");
  static final List<String> DESCRIPTOR_KEYS = List.of("key", "value", "rate_limit", "limits",
      "descriptors", "shadow_mode", "detailed_metric", "value_to_metric", "replaces",
      "onStoreError");
  static final List<String> RATE_LIMIT_KEYS =
      List.of("unit", "requests_per_unit", "unlimited", "name", "replaces");
  static final List<String> REPLACES_KEYS = List.of("name");
  static final Map<String, Duration> UNITS = unitDurations();

  private static Map<String, Duration> unitDurations() {
    Map<String, Duration> m = new LinkedHashMap<>();
    m.put("second", Duration.ofSeconds(1));
    m.put("minute", Duration.ofMinutes(1));
    m.put("hour", Duration.ofHours(1));
    m.put("day", Duration.ofDays(1));
    m.put("week", Duration.ofDays(7));
    m.put("month", Duration.ofDays(30));
    m.put("year", Duration.ofDays(365));
    return m;
  }

  private final Walk walk;

  private DomainsSection(Walk walk) {
    this.walk = walk;
  }

  /** The {@code domains:} list, or the top-level {@code domain:} of an envoyproxy file. */
  static RlsDomains read(Walk walk, Mapping doc) {
    DomainsSection s = new DomainsSection(walk);
    Map<String, RlsDescriptor> roots = new LinkedHashMap<>();
    if (doc.has("domain") || doc.has("descriptors")) {
      s.domain(doc, roots);
    }
    Node list = doc.node("domains");
    if (list != null) {
      if (!(list instanceof SequenceNode seq)) {
        walk.error(list, "domains", describe(list),
            "a list of domains, each with domain: and descriptors:");
      } else {
        int i = 0;
        for (Node d : seq.getValue()) {
          Mapping m = Mapping.of(walk, d, "domains[" + i++ + "]", DOMAIN_KEYS,
              "a mapping with domain: and descriptors:");
          if (m != null) {
            s.domain(m, roots);
          }
        }
      }
    }
    return roots.isEmpty() ? RlsDomains.none() : new RlsDomains(roots);
  }

  private void domain(Mapping m, Map<String, RlsDescriptor> roots) {
    String domain = m.required("domain", "a non-blank domain name", Values.TEXT);
    if (domain == null) {
      return;
    }
    if (roots.containsKey(domain)) {
      walk.error(m.node("domain"), m.path("domain"), quote(domain) + " appears twice",
          "each domain once");
      return;
    }
    Map<String, RlsDescriptor> children = descriptors(m, domain, domain);
    roots.put(domain, new RlsDescriptor(domain, null, domain, children, null, List.of(), null,
        false, false, false, false, List.of(), null, -1));
  }

  private Map<String, RlsDescriptor> descriptors(Mapping owner, String domain, String parent) {
    Map<String, RlsDescriptor> out = new LinkedHashMap<>();
    Node n = owner.node("descriptors");
    if (n == null) {
      return out;
    }
    if (!(n instanceof SequenceNode seq)) {
      walk.error(n, owner.path("descriptors"), describe(n),
          "a list of descriptors, each with a key:");
      return out;
    }
    int i = 0;
    for (Node dn : seq.getValue()) {
      String path = owner.path("descriptors") + "[" + i++ + "]";
      Mapping d = Mapping.of(walk, dn, path, DESCRIPTOR_KEYS,
          "a mapping with key:, value:, rate_limit:, descriptors:");
      if (d == null) {
        continue;
      }
      RlsDescriptor desc = descriptor(d, domain, parent);
      if (desc == null) {
        continue;
      }
      String id = desc.value() == null ? desc.key()
          : desc.key() + "=" + desc.value() + (desc.prefix() ? "*" : "");
      if (out.containsKey(id)) {
        walk.error(d.node("key"), d.path("key"), quote(id) + " appears twice at this level",
            "each key/value once (Sluice: put several limits under one descriptor's limits:)");
        continue;
      }
      out.put(id, desc);
    }
    return out;
  }

  private RlsDescriptor descriptor(Mapping d, String domain, String parent) {
    int before = walk.errors.size();
    String key = d.required("key", "a non-blank descriptor key", Values.TEXT);
    String value = d.get("value", "a descriptor value (a trailing * matches a prefix)",
        text -> text, null);
    if (key == null) {
      return null;
    }
    String path = parent + "." + (value == null ? key : key + "=" + value);
    List<Limit> limits = new ArrayList<>();
    boolean unlimited = false;
    boolean blocked = false;
    String name = null;
    String unit = null;
    long perUnit = -1;
    List<String> replaces = new ArrayList<>();
    Mapping rl = d.has("rate_limit") ? Mapping.of(walk, d.node("rate_limit"),
        d.path("rate_limit"), RATE_LIMIT_KEYS,
        "a mapping with unit: and requests_per_unit:, or unlimited: true") : null;
    if (rl != null) {
      unlimited = rl.get("unlimited", "true or false", BOOLEAN, false);
      name = rl.get("name", "1..128 printable ASCII characters", Values.CORE_NAME, null);
      replaces(rl, replaces);
      if (!unlimited) {
        unit = rl.required("unit", "one of " + String.join(", ", UNITS.keySet()),
            text -> oneOf(new ArrayList<>(UNITS.keySet())).parse(text.toLowerCase(Locale.ROOT)));
        Long n = rl.required("requests_per_unit", "a whole number >= 0",
            wholeNumber(0, Integer.MAX_VALUE));
        if (unit != null && n != null) {
          perUnit = n;
          if (n == 0) {
            blocked = true;
          } else {
            try {
              limits.add(Limit.fixedWindow(name != null ? name : "per-" + unit, n,
                  UNITS.get(unit)));
            } catch (IllegalArgumentException e) {
              walk.coreError(rl.node, rl.path("requests_per_unit"), e, null);
            }
          }
        }
      } else if (rl.has("unit") || rl.has("requests_per_unit")) {
        walk.error(rl.node, rl.path("unlimited"), "true beside unit/requests_per_unit",
            "either unlimited: true or a unit and requests_per_unit");
      }
    }
    replaces(d, replaces);
    Node ln = d.node("limits");
    if (ln != null) {
      if (!(ln instanceof SequenceNode seq) || seq.getValue().isEmpty()) {
        walk.error(ln, d.path("limits"), describe(ln), "a list of Sluice limits, each with a "
            + "type: token-bucket, fixed-window, sliding-window, sliding-log, score or leaky-bucket");
      } else if (unlimited) {
        walk.error(ln, d.path("limits"), "limits beside rate_limit.unlimited",
            "either unlimited: true or limits");
      } else {
        int i = 0;
        int count = seq.getValue().size() + limits.size();
        for (Node one : seq.getValue()) {
          Limit l = RulesSection.limitOf(walk, one, d.path("limits") + "[" + i++ + "]",
              "limit", count);
          if (l != null) {
            limits.add(l);
          }
        }
      }
    }
    boolean shadow = d.get("shadow_mode", "true or false", BOOLEAN, false);
    boolean detailed = d.get("detailed_metric", "true or false", BOOLEAN, false);
    d.get("value_to_metric", "true or false", BOOLEAN, false);
    String onError = d.get("onStoreError", "allow or deny", oneOf(List.of("allow", "deny")),
        "allow");
    Map<String, RlsDescriptor> children = descriptors(d, domain, path);
    if (walk.errors.size() > before) {
      return null;
    }
    Rule rule = null;
    if (!limits.isEmpty()) {
      try {
        Rule.Builder b = Rule.builder(ruleName(path)).key(RlsDescriptor.dimension(0))
            .mode(shadow ? Mode.SHADOW : Mode.ENFORCE)
            .onStoreError(OnStoreError.valueOf(onError.toUpperCase(Locale.ROOT)));
        limits.forEach(b::limit);
        rule = b.build();
      } catch (IllegalArgumentException e) {
        walk.coreError(d.node, d.path("limits"), e, null);
        return null;
      }
    }
    return new RlsDescriptor(key, value, path, children, rule, limits, name, unlimited, blocked,
        shadow, detailed, replaces, unit, perUnit);
  }

  private void replaces(Mapping owner, List<String> into) {
    Node n = owner.node("replaces");
    if (n == null) {
      return;
    }
    if (!(n instanceof SequenceNode seq)) {
      walk.error(n, owner.path("replaces"), describe(n), "a list of {name: ...}");
      return;
    }
    int i = 0;
    for (Node r : seq.getValue()) {
      Mapping m = Mapping.of(walk, r, owner.path("replaces") + "[" + i++ + "]", REPLACES_KEYS,
          "a mapping with name:");
      if (m != null) {
        String name = m.required("name", "the name of another rate_limit", Values.CORE_NAME);
        if (name != null) {
          into.add(name);
        }
      }
    }
  }

  /**
   * The rule name of a node: {@code rls:} and its path when that is a valid core name (printable
   * ASCII, up to 128 characters), else {@code rls:} and a hash of the path. The name keys the
   * counters, so a reload that keeps a node keeps its counts.
   */
  static String ruleName(String path) {
    String name = "rls:" + path;
    if (name.length() <= 128 && name.chars().allMatch(c -> c > 32 && c < 127)) {
      return name;
    }
    try {
      byte[] h = java.security.MessageDigest.getInstance("SHA-256")
          .digest(path.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return "rls:#" + java.util.HexFormat.of().formatHex(h, 0, 16);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
