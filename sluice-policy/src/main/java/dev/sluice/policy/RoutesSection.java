package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.CORE_NAME;
import static dev.sluice.policy.Values.METHOD;
import static dev.sluice.policy.Values.describe;
import static dev.sluice.policy.Values.quote;
import static dev.sluice.policy.Values.wholeNumber;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * The {@code routes:} and {@code global:} sections: which requests get which rules, first match
 * wins. A route's cost is checked against the capacity of every rule it applies once both are
 * known: a cost that can never be paid would make core throw on every such request.
 */
final class RoutesSection {

  // One table: a route's keys in the order they are shown, their reading (each default is that
  // of a route as core builds it; a value left out of the rendering reads as null) and
  // rendering. Read by the section: headers (a mapping) and the human check (named from
  // humanChecks:).
  private static final Field<Route, String> NAME = Field.of("name",
      "1..128 printable ASCII characters", CORE_NAME, Route::name);
  private static final Field<Route, List<String>> METHODS = Field.list("methods",
      "HTTP methods like GET", METHOD, r -> List.copyOf(r.methods()));
  private static final Field<Route, List<String>> PATHS = Field.list("paths",
      "path patterns like /api/** or /healthz", text -> {
        Route.builder("x").path(text);
        return text;
      }, Route::paths);
  private static final Field<Route, Boolean> WEBSOCKET = Field.of("websocket",
      "true (only upgrades) or false (never upgrades); leave it out for either", BOOLEAN,
      Route::websocket);
  private static final Field<Route, List<String>> HOSTS = Field.list("hosts",
      "host names like api.example.com or *.example.com", text -> {
        Route.builder("x").host(text);
        return text;
      }, r -> r.hosts().isEmpty() ? null : r.hosts());
  private static final Field<Route, Map<String, String>> HEADERS = Field.readBySection(
      "headers", r -> r.headers().isEmpty() ? null : r.headers());
  private static final Field<Route, List<String>> FROM = Field.list("from", Toplevel.NETWORK,
      Toplevel::network, r -> r.from().isEmpty() ? null : r.from().toList());
  private static final Field<Route, Boolean> CASE_INSENSITIVE = Field.of("caseInsensitive",
      "true (paths match in either case) or false", BOOLEAN,
      r -> r.caseInsensitive() ? true : null);
  private static final Field<Route, String> HUMAN_CHECK = Field.readBySection("humanCheck",
      Route::humanCheck);
  private static final Field<Route, List<String>> RULES = Field.list("rules", "rule names",
      CORE_NAME, Route::rules);
  private static final Field<Route, Boolean> EXEMPT = Field.of("exempt", "true or false",
      BOOLEAN, Route::exempt);
  private static final Field<Route, Long> COST = Field.of("cost", "a whole number > 0",
      wholeNumber(1, Integer.MAX_VALUE), Route::cost);
  private static final Fields<Route> FIELDS = new Fields<>(NAME, METHODS, PATHS, WEBSOCKET,
      HOSTS, HEADERS, FROM, CASE_INSENSITIVE, HUMAN_CHECK, RULES, EXEMPT, COST);

  static final List<String> KEYS = FIELDS.keys();

  private record RouteCost(String path, Node node, long cost, List<String> rules) {}

  private final Walk walk;
  private final Set<String> ruleNames;
  private final Set<String> humanChecks;
  private final List<RouteCost> costs = new ArrayList<>();

  private RoutesSection(Walk walk, Set<String> ruleNames, Set<String> humanChecks) {
    this.walk = walk;
    this.ruleNames = ruleNames;
    this.humanChecks = humanChecks;
  }

  /** Adds the routes and global rules to {@code policy}, checking route costs. */
  static void read(Walk walk, Mapping doc, Set<String> ruleNames, List<Rule> rules,
      Policy.Builder policy) {
    read(walk, doc, ruleNames, rules, policy, Set.of());
  }

  /** The same, with the names of the {@code humanChecks:} section routes may name. */
  static void read(Walk walk, Mapping doc, Set<String> ruleNames, List<Rule> rules,
      Policy.Builder policy, Set<String> humanChecks) {
    RoutesSection s = new RoutesSection(walk, ruleNames, humanChecks);
    s.routes(doc, policy);
    List<String> global = s.global(doc, policy);
    s.checkCosts(rules, global);
  }

  private void routes(Mapping doc, Policy.Builder policy) {
    Node n = doc.node("routes");
    if (n == null) {
      return;
    }
    if (!(n instanceof SequenceNode seq)) {
      walk.error(n, "routes", describe(n), "a list of routes, tried in order");
      return;
    }
    Set<String> names = new LinkedHashSet<>();
    int i = 0;
    for (Node rn : seq.getValue()) {
      String path = "routes[" + i++ + "]";
      Mapping r = Mapping.of(walk, rn, path, KEYS,
          "a mapping with name, methods, paths, websocket, rules, exempt, cost, hosts, headers, "
              + "from, caseInsensitive");
      if (r == null) {
        continue;
      }
      int before = walk.errors.size();
      Fields<Route>.Row row = FIELDS.read(r, Route.builder("route-" + i).build());
      String name = row.get(NAME);
      if (!names.add(name)) {
        walk.error(r.node("name"), r.path("name"), quote(name), "a name no other route has");
      }
      Route.Builder b = Route.builder(name);
      List<String> methods = row.get(METHODS);
      List<String> paths = row.get(PATHS);
      Boolean websocket = row.get(WEBSOCKET);
      boolean exempt = row.get(EXEMPT);
      boolean caseInsensitive = row.get(CASE_INSENSITIVE) != null && row.get(CASE_INSENSITIVE);
      List<String> hosts = row.get(HOSTS) == null ? List.of() : row.get(HOSTS);
      List<String> from = row.get(FROM) == null ? List.of() : row.get(FROM);
      Map<String, String> headers = headers(r);
      long cost = row.get(COST);
      List<String> rules = row.get(RULES);
      Node rulesNode = r.node("rules");
      for (int k = 0; k < rules.size(); k++) {
        String rule = rules.get(k);
        if (!ruleNames.contains(rule)) {
          boolean listed = rulesNode instanceof SequenceNode rs
              && rs.getValue().size() == rules.size();
          walk.error(listed ? ((SequenceNode) rulesNode).getValue().get(k) : rulesNode,
              r.path("rules") + (listed ? "[" + k + "]" : ""), quote(rule),
              "a rule defined under rules:, one of " + ruleNames);
        }
      }
      String humanCheck = r.get("humanCheck", "a human check under humanChecks:, one of "
          + HumanChecksSection.list(humanChecks), CORE_NAME, null);
      if (humanCheck != null && !humanChecks.contains(humanCheck)) {
        walk.error(r.node("humanCheck"), r.path("humanCheck"), quote(humanCheck),
            "a human check under humanChecks:, one of " + HumanChecksSection.list(humanChecks));
      }
      if (exempt && humanCheck != null) {
        walk.error(r.node("humanCheck"), r.path("humanCheck"), quote(humanCheck),
            "no human check on an exempt route (exempt requests are never checked)");
      }
      b.humanCheck(humanCheck);
      if (exempt && !rules.isEmpty()) {
        walk.error(rulesNode, r.path("rules"), rules.toString(),
            "no rules on an exempt route (exempt requests are never limited)");
      }
      methods.forEach(b::method);
      hosts.forEach(b::host);
      headers.forEach(b::header);
      b.from(from);
      paths.forEach(b::path);
      rules.forEach(b::rule);
      b.websocket(websocket).exempt(exempt).cost(cost).caseInsensitive(caseInsensitive);
      if (cost > 1) {
        costs.add(new RouteCost(r.path("cost"), r.node("cost"), cost, rules));
      }
      if (walk.errors.size() == before) {
        policy.route(b.build());
      }
    }
  }

  /** A route as the effective policy shows it, from the table. */
  static Map<String, Object> render(Route r) {
    return FIELDS.render(r);
  }

  /** {@code headers:}, a mapping of header names to the value each must have ({@code *}: any). */
  private Map<String, String> headers(Mapping r) {
    Map<String, String> out = new LinkedHashMap<>();
    Mapping h = Mapping.of(walk, r.node("headers"), r.path("headers"), null, "a mapping of header names to values, like "
        + "X-Api-Version: \"2\" (\"*\" for any value)");
    if (h == null) {
      return out;
    }
    for (String name : h.fields.keySet()) {
      try {
        Route.builder("x").header(name, "*");
      } catch (IllegalArgumentException e) {
        walk.error(h.fields.get(name).getKeyNode(), h.path(name), quote(name),
            "an HTTP header name like X-Api-Version");
        continue;
      }
      String value = h.get(name, "a header value, or \"*\" for any value", Values.TEXT, null);
      if (value != null) {
        out.put(name, value);
      }
    }
    return out;
  }

  private List<String> global(Mapping doc, Policy.Builder policy) {
    List<String> global = doc.list("global", "rule names", CORE_NAME, List.of());
    for (String name : global) {
      if (!ruleNames.contains(name)) {
        walk.error(doc.node("global"), "global", quote(name),
            "a rule defined under rules:, one of " + ruleNames);
      } else {
        policy.global(name);
      }
    }
    return global;
  }

  /**
   * A route's cost above the capacity of a rule it applies (its own or a global one) can never
   * be paid: core throws on every such request. Rejected here, at the route's line, instead.
   * Rules that are off are never evaluated, so they do not count.
   */
  private void checkCosts(List<Rule> rules, List<String> global) {
    Map<String, Rule> byName = new LinkedHashMap<>();
    rules.forEach(rule -> byName.put(rule.name(), rule));
    for (RouteCost route : costs) {
      List<String> applied = new ArrayList<>(route.rules());
      applied.addAll(global);
      for (String name : applied) {
        Rule rule = byName.get(name);
        if (rule == null || rule.mode() == Mode.OFF) {
          continue;
        }
        for (Limit limit : rule.limits()) {
          if (route.cost() > limit.capacity()) {
            walk.error(route.node(), route.path(), Long.toString(route.cost()), "<= "
                + limit.capacity() + ", the capacity of limit '" + limit.name() + "' in "
                + (route.rules().contains(name) ? "rule '" : "global rule '") + name + "'");
            break;
          }
        }
      }
    }
  }
}
