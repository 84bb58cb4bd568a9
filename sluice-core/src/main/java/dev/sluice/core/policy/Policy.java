package dev.sluice.core.policy;

import dev.sluice.core.Identity;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.address.Networks;
import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Maps a request to the rules that apply to it, in one place shared by every adapter (the
 * gateway, the servlet filter, the Spring starter). Immutable; swap a whole policy to reload.
 *
 * <p>Routes are tried in order and the first match wins: an exempt route ends the search (health
 * checks are never limited); otherwise its rules apply, plus the policy's global rules (a
 * per-address backstop such as seed 004's 600 per minute). A request no route matches gets only
 * the global rules.
 *
 * <p>Each key dimension a rule uses must have a {@link Source}; {@code ip} is the client address
 * unless declared otherwise. A dimension whose source yields nothing lands in the rule's shared
 * bucket.
 *
 * <p>A client whose resolved address is on the {@code allow} list is never limited, whatever the
 * route (nginx's {@code geo} map to an empty key, express-rate-limit's {@code skip}). A dry-run
 * policy ({@code mode: shadow}) runs every enforcing rule as a shadow rule: it decides and counts,
 * and never refuses (nginx's {@code limit_req_dry_run}), for a first deployment.
 */
public final class Policy {

  private final Map<String, Rule> rules;
  private final List<Route> routes;
  private final List<Rule> global;
  private final Map<String, Source> dimensions;
  private final ClientAddressResolver clientAddress;
  private final Networks allow;
  private final boolean dryRun;
  private final RequestTarget.Rules paths;
  /** Client networks answered 403 and never forwarded. */
  private final Networks deny;
  private final Map<String, HumanCheck> humanChecks;
  /** Per route, in order: its rules followed by the global ones, built once. */
  private final List<Selection> selections;
  /** Per route, its exempt check (naming the route), or null for a route that is not exempt. */
  private final Check[] exemptChecks;
  /** What a request no route matches gets: the global rules. */
  private final Selection globalSelection;
  /** Per selection (the global one last): the dimensions its identity reads, resolved once. */
  private final Reads[] reads;

  /**
   * What a route selects, split by when each rule is counted: {@code rules} when the request is
   * decided (one atomic step), {@code counted} on the response, {@code leases} while in flight;
   * {@code all} every rule whose key dimensions the identity needs.
   */
  record Selection(List<Rule> rules, List<Rule> counted, List<Rule> leases,
      HumanCheck humanCheck, List<Rule> all, boolean plain, Check.Extras extras) {

    Selection(List<Rule> rules, List<Rule> counted, List<Rule> leases, HumanCheck humanCheck,
        List<Rule> all, boolean plain) {
      this(rules, counted, leases, humanCheck, all, plain, null);
    }

    static Selection of(List<Rule> selected, HumanCheck humanCheck) {
      List<Rule> rules = new ArrayList<>();
      List<Rule> counted = new ArrayList<>();
      List<Rule> leases = new ArrayList<>();
      for (Rule rule : selected) {
        if (rule.concurrency() > 0) {
          leases.add(rule);
        } else if (!rule.countedOnRequest()) {
          counted.add(rule);
        } else {
          rules.add(rule);
        }
      }
      List<Rule> all = new ArrayList<>(selected);
      if (humanCheck != null) {
        all.add(humanCheck.limit());
      }
      boolean plain = counted.isEmpty() && leases.isEmpty() && humanCheck == null;
      Selection s = new Selection(plain ? List.copyOf(selected) : List.copyOf(rules),
          List.copyOf(counted), List.copyOf(leases), humanCheck, List.copyOf(all), plain);
      return plain ? s : new Selection(s.rules(), s.counted(), s.leases(), humanCheck, s.all(),
          false, new Check.Extras(s, null));
    }
  }
  private final Challenge challenge;
  /** Made once per policy: every admission step of this policy shares its keys and nonces. */
  private final Challenges challenges;

  private Policy(Builder b) {
    // In the order given: a policy file's effective form lists rules and dimensions as written.
    Map<String, Rule> given = new LinkedHashMap<>(b.rules);
    if (b.dryRun) {
      given.replaceAll((name, rule) -> rule.mode() == Mode.ENFORCE
          ? rule.toBuilder().mode(Mode.SHADOW).build() : rule);
    }
    this.rules = Collections.unmodifiableMap(given);
    this.allow = b.allow;
    this.deny = b.deny;
    this.humanChecks = Collections.unmodifiableMap(new LinkedHashMap<>(b.humanChecks));
    this.dryRun = b.dryRun;
    this.paths = b.paths;
    this.challenge = b.challenge;
    this.routes = List.copyOf(b.routes);
    this.dimensions = Collections.unmodifiableMap(new LinkedHashMap<>(b.dimensions));
    this.clientAddress = b.clientAddress;
    List<Rule> g = new ArrayList<>();
    for (String name : b.global) {
      g.add(rules.get(name));
    }
    this.global = List.copyOf(g);
    this.globalSelection = Selection.of(global, null);
    this.selections = new ArrayList<>(routes.size());
    for (Route route : routes) {
      List<Rule> selected = new ArrayList<>(route.rules().size() + global.size());
      for (String name : route.rules()) {
        selected.add(rules.get(name));
      }
      selected.addAll(global);
      selections.add(Selection.of(selected,
          route.humanCheck() == null ? null : humanChecks.get(route.humanCheck())));
    }
    this.exemptChecks = new Check[routes.size()];
    for (int i = 0; i < routes.size(); i++) {
      if (routes.get(i).exempt()) {
        exemptChecks[i] = Check.exemptCheck(routes.get(i).name());
      }
    }
    this.reads = new Reads[selections.size() + 1];
    for (int i = 0; i <= selections.size(); i++) {
      Selection s = i < selections.size() ? selections.get(i) : globalSelection;
      reads[i] = reads(s.plain() ? s.rules() : s.all());
    }
    // Last, from the fields above; here so that clashing cookie names fail the build.
    this.challenges = Challenges.of(this);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Selects the rules, identity and cost for {@code request}. Never throws on request input. */
  public Check select(RequestView request) {
    return select(request, null);
  }

  /**
   * {@link #select(RequestView)}, answering {@code last} (a check this policy selected before)
   * when it is the same check: a client that keeps its connection gets the same identity and,
   * on the same route, the same check, which is then not built again.
   */
  Check select(RequestView request, Check last) {
    String method = request.method() == null ? "" : request.method().toUpperCase(Locale.ROOT);
    // Adapters pass the path RequestTarget normalised (the one they forward); for one that did
    // not, this makes the same path of it (a scan, and the same string, when it is normal).
    String path = RequestTarget.normalizePath(request.path(), paths);
    boolean upgrade = request.websocketUpgrade();
    if (!deny.isEmpty() && deny.contains(request.clientAddress(clientAddress))) {
      return Check.deniedCheck();
    }
    if (!allow.isEmpty() && allow.contains(request.clientAddress(clientAddress))) {
      return Check.allowlistedCheck();
    }
    Route matched = null;
    Selection selected = globalSelection;
    Reads keys = reads[routes.size()];
    int at = -1;
    for (int i = 0; i < routes.size(); i++) {
      if (routes.get(i).matches(method, path, upgrade, request, clientAddress)) {
        at = i;
        matched = routes.get(i);
        selected = selections.get(i);
        keys = reads[i];
        break;
      }
    }
    if (matched != null && matched.exempt()) {
      return exemptChecks[at];
    }
    long cost = matched == null ? 1 : matched.cost();
    String route = matched == null ? null : matched.name();
    if (selected.plain()) {
      List<Rule> rules = selected.rules();
      if (last == null) {
        return Check.of(rules, identify(request, keys), cost, route);
      }
      Identity identity = sameIdentity(request, keys, last.identity()) ? last.identity()
          : identify(request, keys);
      return last.is(rules, identity, cost, route) ? last
          : Check.of(rules, identity, cost, route);
    }
    String remoteIp = null;
    if (selected.humanCheck() != null) {
      ClientAddress a = request.clientAddress(clientAddress);
      remoteIp = a.known() && (a.ipv4() || a.prefixLength() == 128) ? a.toString() : null;
    }
    return Check.of(selected, identify(request, keys), cost, route, remoteIp);
  }

  /** The identity of {@code request} for the dimensions {@code rules} read. */
  public Identity identify(RequestView request, List<Rule> rules) {
    return identify(request, reads(rules));
  }

  /** The distinct key dimensions of a list of rules, each with where its value is read. */
  private record Reads(String[] names, Source[] sources, boolean ipOnly) {}

  private Reads reads(List<Rule> rules) {
    List<String> names = new ArrayList<>();
    for (Rule rule : rules) {
      for (String dimension : rule.dimensions()) {
        if (!names.contains(dimension)) {
          names.add(dimension);
        }
      }
    }
    Source[] sources = new Source[names.size()];
    for (int i = 0; i < sources.length; i++) {
      sources[i] = dimensions.get(names.get(i));
    }
    return new Reads(names.toArray(new String[0]), sources,
        names.size() == 1 && names.get(0).equals("ip"));
  }

  private Identity identify(RequestView request, Reads reads) {
    String[] names = reads.names();
    Source[] sources = reads.sources();
    if (reads.ipOnly()) {
      // The common key, made without the general copy-and-check of Identity.with.
      Object value = sources[0] == null ? null : sources[0].read(request, clientAddress);
      return value instanceof ClientAddress a ? Identity.ip(a) : Identity.ip((String) value);
    }
    Identity identity = Identity.empty();
    for (int i = 0; i < names.length; i++) {
      Object value = sources[i] == null ? null : sources[i].read(request, clientAddress);
      if (value instanceof ClientAddress address) {
        identity = identity.with(names[i], address);
      } else if (value != null) {
        identity = identity.with(names[i], (String) value);
      }
    }
    return identity;
  }

  /** True when {@code request}'s identity by {@code reads} is {@code last}, value for value. */
  private boolean sameIdentity(RequestView request, Reads reads, Identity last) {
    String[] names = reads.names();
    Source[] sources = reads.sources();
    int values = 0;
    for (int i = 0; i < names.length; i++) {
      Object value = sources[i] == null ? null : sources[i].read(request, clientAddress);
      if (!last.holds(names[i], value)) {
        return false;
      }
      values += value == null ? 0 : 1;
    }
    return values == last.size();
  }

  /** Every rule, by name, in the order added. */
  public Map<String, Rule> rules() {
    return rules;
  }

  public List<Route> routes() {
    return routes;
  }

  /** Rules applied to every non-exempt request. */
  public List<Rule> global() {
    return global;
  }

  /** Key dimensions and where their values come from, {@code ip} first, then as added. */
  public Map<String, Source> dimensions() {
    return dimensions;
  }

  public ClientAddressResolver clientAddress() {
    return clientAddress;
  }

  /** Client networks never limited; empty when there are none. */
  public Networks allow() {
    return allow;
  }

  /** Client networks answered 403 and never forwarded; empty when there are none. */
  public Networks deny() {
    return deny;
  }

  /** The human checks routes name, by name. */
  public Map<String, HumanCheck> humanChecks() {
    return humanChecks;
  }

  /** How request paths are read ({@code path:} in a policy file): one rule for every adapter. */
  public RequestTarget.Rules paths() {
    return paths;
  }

  /**
   * How rules whose action is {@code challenge} challenge browsers, or null when the policy does
   * not say (such rules then use {@link Challenge#defaults()}).
   */
  public Challenge challenge() {
    return challenge;
  }

  /** The policy's challenges: null when no rule challenges. */
  Challenges challenges() {
    return challenges;
  }

  /** True when every enforcing rule runs as a shadow rule ({@code mode: shadow}, {@code --dry-run}). */
  public boolean dryRun() {
    return dryRun;
  }

  /** This policy with every enforcing rule in shadow mode; this one when it already is. */
  public Policy withDryRun() {
    if (dryRun) {
      return this;
    }
    Builder b = new Builder();
    rules.values().forEach(b::rule);
    routes.forEach(b::route);
    global.forEach(rule -> b.global(rule.name()));
    dimensions.forEach(b::dimension);
    b.clientAddress = clientAddress;
    b.allow = allow;
    b.deny = deny;
    b.humanChecks.putAll(humanChecks);
    b.paths = paths;
    b.challenge = challenge;
    return b.dryRun(true).build();
  }

  @Override
  public String toString() {
    return "Policy{rules=" + rules.values() + ", routes=" + routes + ", global=" + global
        + (allow.isEmpty() ? "" : ", allow=" + allow)
        + (deny.isEmpty() ? "" : ", deny=" + deny) + (dryRun ? ", dryRun" : "") + "}";
  }

  /** Builds a {@link Policy}; {@link #build()} checks that every reference resolves. */
  public static final class Builder {
    private final Map<String, Rule> rules = new LinkedHashMap<>();
    private final List<Route> routes = new ArrayList<>();
    private final List<String> global = new ArrayList<>();
    private final Map<String, Source> dimensions = new LinkedHashMap<>();
    private ClientAddressResolver clientAddress = ClientAddressResolver.direct();
    private Networks allow = Networks.none();
    private Networks deny = Networks.none();
    private final Map<String, HumanCheck> humanChecks = new LinkedHashMap<>();
    private boolean dryRun;
    private RequestTarget.Rules paths = RequestTarget.Rules.defaults();
    private Challenge challenge;

    private Builder() {
      dimensions.put("ip", Source.clientAddress());
    }

    public Builder rule(Rule rule) {
      Checks.notNull(rule, "rule");
      if (rules.putIfAbsent(rule.name(), rule) != null) {
        throw Checks.invalid("rules", "'" + rule.name() + "' appears twice",
            "unique rule names");
      }
      return this;
    }

    /** Adds a route; routes are tried in the order added. */
    public Builder route(Route route) {
      routes.add(Checks.notNull(route, "route"));
      return this;
    }

    /** Applies rule {@code name} to every non-exempt request. */
    public Builder global(String name) {
      global.add(Checks.name(name, "global"));
      return this;
    }

    /** Declares where key dimension {@code name} comes from. */
    public Builder dimension(String name, Source source) {
      Checks.dimension(name);
      dimensions.put(name, Checks.notNull(source, "source"));
      return this;
    }

    public Builder clientAddress(ClientAddressResolver resolver) {
      this.clientAddress = Checks.notNull(resolver, "clientAddress");
      return this;
    }

    /** Client networks ({@code 10.0.0.0/8}, {@code ::1}) whose requests are never limited. */
    public Builder allow(List<String> cidrs) {
      this.allow = Networks.parse(cidrs, "allow");
      return this;
    }

    /**
     * Client networks whose requests are answered 403 and never forwarded, whatever the route
     * (nginx's {@code deny}); checked before {@link #allow}, so a client on both is denied.
     */
    public Builder deny(List<String> cidrs) {
      this.deny = Networks.parse(cidrs, "deny");
      return this;
    }

    /** A human check routes may name. */
    public Builder humanCheck(HumanCheck check) {
      Checks.notNull(check, "humanCheck");
      if (humanChecks.putIfAbsent(check.name(), check) != null) {
        throw Checks.invalid("humanChecks", "'" + check.name() + "' appears twice",
            "unique human check names");
      }
      return this;
    }

    /** How request paths are read: path parameters and encoded slashes (default: strip, refuse). */
    public Builder paths(RequestTarget.Rules rules) {
      this.paths = Checks.notNull(rules, "path");
      return this;
    }

    /** How rules whose action is {@code challenge} challenge browsers (null: the defaults). */
    public Builder challenge(Challenge challenge) {
      this.challenge = challenge;
      return this;
    }

    /** Runs every enforcing rule as a shadow rule: decide and count, never refuse. */
    public Builder dryRun(boolean on) {
      this.dryRun = on;
      return this;
    }

    public Policy build() {
      for (Route route : routes) {
        for (String name : route.rules()) {
          requireRule(name, "route '" + route.name() + "'");
        }
        String h = route.humanCheck();
        if (h != null) {
          HumanCheck check = humanChecks.get(h);
          if (check == null) {
            throw Checks.invalid("humanCheck", "'" + h + "' in route '" + route.name() + "'",
                "one of " + humanChecks.keySet());
          }
          for (String dimension : check.limit().dimensions()) {
            if (!dimensions.containsKey(dimension)) {
              throw Checks.invalid("key", "'" + dimension + "' in human check '" + h + "'",
                  "a declared dimension, one of " + dimensions.keySet());
            }
          }
        }
      }
      for (String name : global) {
        requireRule(name, "global");
      }
      return new Policy(this);
    }

    private void requireRule(String name, String where) {
      Rule rule = rules.get(name);
      if (rule == null) {
        throw Checks.invalid("rule", "'" + name + "' in " + where,
            "one of " + rules.keySet());
      }
      for (String dimension : rule.dimensions()) {
        if (!dimensions.containsKey(dimension)) {
          throw Checks.invalid("key", "'" + dimension + "' in rule '" + name + "'",
              "a declared dimension, one of " + dimensions.keySet());
        }
      }
    }
  }
}
