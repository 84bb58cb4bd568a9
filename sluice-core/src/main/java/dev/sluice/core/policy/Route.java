package dev.sluice.core.policy;

import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.address.Networks;
import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which requests a set of rules applies to: methods, path patterns, whether the request is a
 * WebSocket upgrade, and optionally hosts, header values and client networks; every condition
 * given must hold. An exempt route is never limited (health checks). Immutable.
 *
 * <p>The cheap conditions are tried first; hosts, headers and networks are read only for routes
 * that name them, so a policy without them pays nothing for them.
 */
public final class Route {

  private final String name;
  private final Set<String> methods;
  private final List<PathPattern> paths;
  private final Boolean websocket;
  private final List<String> rules;
  private final boolean exempt;
  private final long cost;
  private final List<String> hosts;
  /** Header names (lower case) and the value each must have; {@code *} for any value. */
  private final Map<String, String> headers;
  private final String[] headerNames;
  private final String[] headerValues;
  private final Networks from;
  private final boolean caseInsensitive;
  private final String humanCheck;

  private Route(Builder b) {
    this.name = b.name;
    this.methods = Collections.unmodifiableSet(new LinkedHashSet<>(b.methods));
    this.caseInsensitive = b.caseInsensitive;
    this.paths = b.caseInsensitive ? b.paths.stream().map(PathPattern::ignoringCase).toList()
        : List.copyOf(b.paths);
    this.websocket = b.websocket;
    this.rules = List.copyOf(b.rules);
    this.exempt = b.exempt;
    this.cost = b.cost;
    this.hosts = List.copyOf(b.hosts);
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    this.headerNames = headers.keySet().toArray(new String[0]);
    this.headerValues = headers.values().toArray(new String[0]);
    this.from = b.from;
    this.humanCheck = b.humanCheck;
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  /** Upper-case methods matched, in the order given; empty means any. */
  public Set<String> methods() {
    return methods;
  }

  /** Path patterns matched; empty means any. */
  public List<String> paths() {
    List<String> out = new ArrayList<>(paths.size());
    paths.forEach(p -> out.add(p.toString()));
    return out;
  }

  /** Whether the path patterns match letters in either case ({@code /STRICT} as {@code /strict}). */
  public boolean caseInsensitive() {
    return caseInsensitive;
  }

  /** True: only WebSocket upgrades; false: never; null: either. */
  public Boolean websocket() {
    return websocket;
  }

  /** Names of the rules checked for matching requests. */
  public List<String> rules() {
    return rules;
  }

  public boolean exempt() {
    return exempt;
  }

  public long cost() {
    return cost;
  }

  /** Host names matched (lower case; {@code *.example.com} for its subdomains); empty means any. */
  public List<String> hosts() {
    return hosts;
  }

  /** Header names (lower case) and the value each must have, {@code *} for any; empty: none. */
  public Map<String, String> headers() {
    return headers;
  }

  /** Client networks matched; empty means any client. */
  public Networks from() {
    return from;
  }

  /** The {@link HumanCheck} matching requests must pass, by name, or null. */
  public String humanCheck() {
    return humanCheck;
  }

  boolean matches(String method, String path, boolean upgrade, RequestView request,
      ClientAddressResolver resolver) {
    if (!matches(method, path, upgrade)) {
      return false;
    }
    if (!hosts.isEmpty() && !hostMatches(request.header("host"))) {
      return false;
    }
    for (int i = 0; i < headerNames.length; i++) {
      String v = request.header(headerNames[i]);
      if (v == null || (!headerValues[i].equals("*") && !headerValues[i].equals(v.strip()))) {
        return false;
      }
    }
    return from.isEmpty() || from.contains(request.clientAddress(resolver));
  }

  /** The Host header without its port, compared ignoring case; a trailing dot is ignored. */
  private boolean hostMatches(String host) {
    if (host == null) {
      return false;
    }
    String h = host.strip();
    int end = h.length();
    if (h.startsWith("[")) {
      int close = h.indexOf(']');
      end = close < 0 ? end : close + 1;
    } else {
      int colon = h.lastIndexOf(':');
      end = colon < 0 ? end : colon;
    }
    if (end > 0 && h.charAt(end - 1) == '.') {
      end--;
    }
    for (String pattern : hosts) {
      if (pattern.startsWith("*.")) {
        int n = pattern.length() - 1; // ".example.com"
        if (end > n && h.regionMatches(true, end - n, pattern, 1, n)) {
          return true;
        }
      } else if (end == pattern.length() && h.regionMatches(true, 0, pattern, 0, end)) {
        return true;
      }
    }
    return false;
  }

  boolean matches(String method, String path, boolean upgrade) {
    if (websocket != null && websocket != upgrade) {
      return false;
    }
    if (!methods.isEmpty() && !methods.contains(method)) {
      return false;
    }
    if (paths.isEmpty()) {
      return true;
    }
    for (int i = 0; i < paths.size(); i++) {   // indexed: no iterator per request
      if (paths.get(i).matches(path)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "Route{" + name + ", methods=" + methods + ", paths=" + paths + ", websocket="
        + websocket + (hosts.isEmpty() ? "" : ", hosts=" + hosts)
        + (headers.isEmpty() ? "" : ", headers=" + headers)
        + (from.isEmpty() ? "" : ", from=" + from)
        + (humanCheck == null ? "" : ", humanCheck=" + humanCheck)
        + (exempt ? ", exempt" : ", rules=" + rules) + "}";
  }

  /** Builds a {@link Route}. */
  public static final class Builder {
    private final String name;
    private final Set<String> methods = new LinkedHashSet<>();
    private final List<PathPattern> paths = new ArrayList<>();
    private Boolean websocket;
    private final List<String> rules = new ArrayList<>();
    private boolean exempt;
    private long cost = 1;
    private final List<String> hosts = new ArrayList<>();
    private final Map<String, String> headers = new LinkedHashMap<>();
    private Networks from = Networks.none();
    private boolean caseInsensitive;
    private String humanCheck;

    private static final String HOST =
        "[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*";

    private Builder(String name) {
      this.name = Checks.name(name, "name");
    }

    public Builder method(String method) {
      Checks.name(method, "method");
      methods.add(method.toUpperCase(Locale.ROOT));
      return this;
    }

    /** A path glob: {@code /healthz}, {@code /api/*}, {@code /records/**}. */
    public Builder path(String pattern) {
      paths.add(PathPattern.parse(pattern));
      return this;
    }

    /**
     * Whether the path patterns match letters in either case, for an upstream that routes
     * case-insensitively; paths are case-sensitive by default, as RFC 3986 has them.
     */
    public Builder caseInsensitive(boolean caseInsensitive) {
      this.caseInsensitive = caseInsensitive;
      return this;
    }

    public Builder websocket(Boolean websocket) {
      this.websocket = websocket;
      return this;
    }

    public Builder rule(String rule) {
      rules.add(Checks.name(rule, "rule"));
      return this;
    }

    public Builder exempt(boolean exempt) {
      this.exempt = exempt;
      return this;
    }

    public Builder cost(long cost) {
      this.cost = Checks.positive(cost, "cost");
      return this;
    }

    /**
     * A host the request's {@code Host} must name (its port ignored, case ignored), or
     * {@code *.example.com} for any subdomain of {@code example.com} (not the name itself).
     */
    public Builder host(String host) {
      Checks.notNull(host, "host");
      String h = host.strip().toLowerCase(Locale.ROOT);
      String bare = h.startsWith("*.") ? h.substring(2) : h;
      if (!bare.matches(HOST)) {
        throw Checks.invalid("host", host, "a host name like api.example.com or *.example.com");
      }
      hosts.add(h);
      return this;
    }

    /** A header the request must carry with exactly {@code value}, or with any value for {@code *}. */
    public Builder header(String name, String value) {
      Checks.name(name, "header");
      Checks.notNull(value, "header value");
      if (!name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
        throw Checks.invalid("header", name, "an HTTP header name like X-Api-Version");
      }
      headers.put(name.toLowerCase(Locale.ROOT), value.strip());
      return this;
    }

    /** Client networks (the resolved address, after trusted proxies) the route applies to. */
    public Builder from(List<String> cidrs) {
      this.from = Networks.parse(cidrs, "from");
      return this;
    }

    /** Requests of this route must pass the policy's human check {@code name} to go on. */
    public Builder humanCheck(String name) {
      this.humanCheck = name == null ? null : Checks.name(name, "humanCheck");
      return this;
    }

    public Route build() {
      if (exempt && humanCheck != null) {
        throw Checks.invalid("humanCheck", humanCheck, "no human check on exempt route '" + name
            + "'");
      }
      return new Route(this);
    }
  }
}
