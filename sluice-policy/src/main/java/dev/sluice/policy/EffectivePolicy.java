package dev.sluice.policy;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The effective policy of a loaded {@link PolicyConfig}: every section with its defaults filled
 * in and the environment applied, as a tree of maps, lists, strings, numbers and booleans, in the
 * order of the file format. Rendered from the model rather than built beside it, so what
 * {@code sluice check} and {@code /v1/policy} show is what runs. {@link PolicyFormat} prints it as
 * YAML that loads back to the same policy, or as JSON.
 */
public final class EffectivePolicy {

  private EffectivePolicy() {}

  public static Map<String, Object> render(PolicyConfig c) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("version", 1);
    if (c.policy().dryRun()) {
      out.put("mode", "shadow");
    }
    if (!c.policy().allow().isEmpty()) {
      out.put("allow", c.policy().allow().toList());
    }
    if (!c.policy().deny().isEmpty()) {
      out.put("deny", c.policy().deny().toList());
    }
    if (!c.policy().paths().equals(dev.sluice.core.policy.RequestTarget.Rules.defaults())) {
      Map<String, Object> path = new LinkedHashMap<>();
      path.put("parameters", c.policy().paths().parameters().name().toLowerCase(Locale.ROOT));
      path.put("encodedSlashes",
          c.policy().paths().encodedSlashes().name().toLowerCase(Locale.ROOT));
      out.put("path", path);
    }
    out.put("trust", TrustSection.render(c.trust()));
    Map<String, Object> dimensions = new LinkedHashMap<>();
    c.policy().dimensions().forEach((name, source) -> dimensions.put(name, source.toString()));
    out.put("dimensions", dimensions);
    Map<String, Object> rules = new LinkedHashMap<>();
    c.policy().rules().forEach((name, rule) -> rules.put(name,
        RulesSection.render(rule, c.offSwitches().get(name))));
    out.put("rules", rules);
    if (!c.policy().humanChecks().isEmpty()) {
      Map<String, Object> checks = new LinkedHashMap<>();
      c.policy().humanChecks().forEach((name, h) -> checks.put(name, HumanChecksSection.render(h)));
      out.put("humanChecks", checks);
    }
    List<Object> routes = new ArrayList<>();
    c.policy().routes().forEach(route -> routes.add(RoutesSection.render(route)));
    out.put("routes", routes);
    out.put("global", c.policy().global().stream().map(Rule::name).toList());
    if (c.policy().challenge() != null) {
      out.put("challenge", ChallengeSection.render(c.policy().challenge()));
    }
    out.put("response", ResponseSection.render(c.response()));
    out.put("cors", CorsSection.render(c.cors()));
    out.put("websocket", WebSocketSection.render(c.websocket()));
    out.put("gateway", GatewaySection.render(c.gateway()));
    out.put("store", StoreSection.render(c.store()));
    if (c.moderation().present()) {
      out.put("moderation", ModerationSection.render(c.moderation()));
    }
    if (!c.domains().isEmpty()) {
      List<Object> domains = new ArrayList<>();
      c.domains().tree().forEach((name, nodes) -> {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("domain", name);
        d.put("descriptors", descriptors(nodes));
        domains.add(d);
      });
      out.put("domains", domains);
    }
    RlsSettings r = c.rls();
    if (!c.domains().isEmpty() || !r.equals(RlsSettings.defaults())) {
      out.put("rls", RlsSection.render(r));
    }
    if (!c.logging().equals(LoggingSettings.defaults())) {
      out.put("logging", LoggingSection.render(c.logging()));
    }
    return out;
  }

  private static List<Object> descriptors(Map<String, RlsDescriptor> nodes) {
    List<Object> out = new ArrayList<>();
    for (RlsDescriptor n : nodes.values()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("key", n.key());
      if (n.value() != null) {
        m.put("value", n.value() + (n.prefix() ? "*" : ""));
      }
      List<Limit> limits = n.limits();
      Map<String, Object> rl = new LinkedHashMap<>();
      if (n.name() != null) {
        rl.put("name", n.name());
      }
      if (n.unlimited()) {
        rl.put("unlimited", true);
      } else if (n.unit() != null) {
        rl.put("unit", n.unit());
        rl.put("requests_per_unit", n.requestsPerUnit());
        if (!n.blocked()) {
          limits = limits.subList(1, limits.size());
        }
      }
      if (!n.replaces().isEmpty()) {
        rl.put("replaces", n.replaces().stream().map(x -> Map.of("name", x)).toList());
      }
      if (!rl.isEmpty()) {
        m.put("rate_limit", rl);
      }
      if (!limits.isEmpty()) {
        m.put("limits", limits.stream().map(EffectivePolicy::limit).toList());
      }
      if (n.shadow()) {
        m.put("shadow_mode", true);
      }
      if (n.detailedMetric()) {
        m.put("detailed_metric", true);
      }
      if (!n.limits().isEmpty()) {
        m.put("onStoreError", lower(n.onStoreError()));
      }
      Map<String, RlsDescriptor> children = n.children();
      if (!children.isEmpty()) {
        m.put("descriptors", descriptors(children));
      }
      out.add(m);
    }
    return out;
  }

  /** A limit as given: core keeps a token bucket's refill and period beside its rounded step. */
  static Map<String, Object> limit(Limit l) {
    Map<String, Object> lm = new LinkedHashMap<>();
    lm.put("type", l.kind().configName());
    lm.put("name", l.name());
    switch (l.kind()) {
      case TOKEN_BUCKET -> {
        lm.put("burst", l.capacity());
        lm.put("refill", l.refill());
        lm.put("period", Durations.format(l.period()));
      }
      case LEAKY_BUCKET -> {
        lm.put("rate", l.refill());
        lm.put("period", Durations.format(l.period()));
        lm.put("burst", l.capacity() - 1);
      }
      case SCORE -> {
        lm.put("maxScore", l.maxScore());
        lm.put("perAction", l.perAction());
        lm.put("decay", Durations.format(l.period()));
      }
      default -> {
        lm.put("limit", l.capacity());
        lm.put("window", Durations.format(l.period()));
      }
    }
    return lm;
  }

  private static String lower(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }
}
