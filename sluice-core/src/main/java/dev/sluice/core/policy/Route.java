package dev.sluice.core.policy;

import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which requests a set of rules applies to: methods, path patterns and whether the request is a
 * WebSocket upgrade. An exempt route is never limited (health checks). Immutable.
 */
public final class Route {

  private final String name;
  private final Set<String> methods;
  private final List<PathPattern> paths;
  private final Boolean websocket;
  private final List<String> rules;
  private final boolean exempt;
  private final long cost;

  private Route(Builder b) {
    this.name = b.name;
    this.methods = Collections.unmodifiableSet(new LinkedHashSet<>(b.methods));
    this.paths = List.copyOf(b.paths);
    this.websocket = b.websocket;
    this.rules = List.copyOf(b.rules);
    this.exempt = b.exempt;
    this.cost = b.cost;
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

  boolean matches(String method, String[] path, boolean upgrade) {
    if (websocket != null && websocket != upgrade) {
      return false;
    }
    if (!methods.isEmpty() && !methods.contains(method)) {
      return false;
    }
    if (paths.isEmpty()) {
      return true;
    }
    for (PathPattern pattern : paths) {
      if (pattern.matches(path)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "Route{" + name + ", methods=" + methods + ", paths=" + paths + ", websocket="
        + websocket + (exempt ? ", exempt" : ", rules=" + rules) + "}";
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

    public Route build() {
      return new Route(this);
    }
  }
}
