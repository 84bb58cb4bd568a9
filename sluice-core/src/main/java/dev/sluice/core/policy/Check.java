package dev.sluice.core.policy;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a {@link Policy} selected for one request: the rules to check, who is calling and at what
 * cost. {@link #exempt()} requests are never limited; an empty rule list means no rule applies.
 */
public final class Check {

  private static final Check EXEMPT = new Check(List.of(), Identity.empty(), 1, null, true);
  private static final Check ALLOWLISTED =
      new Check(List.of(), Identity.empty(), 1, null, true, true);

  private final List<Rule> rules;
  private final Identity identity;
  private final long cost;
  private final String route;
  private final boolean exempt;
  private final boolean allowlisted;

  private Check(List<Rule> rules, Identity identity, long cost, String route, boolean exempt) {
    this(rules, identity, cost, route, exempt, false);
  }

  private Check(List<Rule> rules, Identity identity, long cost, String route, boolean exempt,
      boolean allowlisted) {
    this.rules = rules;
    this.identity = identity;
    this.cost = cost;
    this.route = route;
    this.exempt = exempt;
    this.allowlisted = allowlisted;
  }

  /** A check of {@code rules} made outside a policy's routes (a method-level limit). */
  public static Check of(List<Rule> rules, Identity identity, long cost) {
    return new Check(List.copyOf(rules), identity, cost, null, false);
  }

  static Check of(List<Rule> rules, Identity identity, long cost, String route) {
    return new Check(rules, identity, cost, route, false);
  }

  static Check exemptCheck() {
    return EXEMPT;
  }

  static Check allowlistedCheck() {
    return ALLOWLISTED;
  }

  public List<Rule> rules() {
    return rules;
  }

  public Identity identity() {
    return identity;
  }

  public long cost() {
    return cost;
  }

  /** The matched route's name, or null when no route matched or the request is exempt. */
  public String route() {
    return route;
  }

  /** Never limited: an exempt route, or a client on the policy's {@code allow} list. */
  public boolean exempt() {
    return exempt;
  }

  /** Exempt because the client's address is on the policy's {@code allow} list. */
  public boolean allowlisted() {
    return allowlisted;
  }

  /** Runs this check on {@code limiter}; exempt checks and checks without rules always pass. */
  public Decision apply(RateLimiter limiter) {
    return rules.isEmpty() ? Decision.unlimited() : limiter.check(rules, identity, cost);
  }

  /** {@link #apply} without waiting on a remote store; see {@link RateLimiter#checkAsync}. */
  public CompletionStage<Decision> applyAsync(RateLimiter limiter) {
    return rules.isEmpty() ? CompletableFuture.completedFuture(Decision.unlimited())
        : limiter.checkAsync(rules, identity, cost);
  }

  @Override
  public String toString() {
    return allowlisted ? "Check{allowlisted}" : exempt ? "Check{exempt}" : "Check{route=" + route + ", rules=" + rules.size()
        + ", identity=" + identity + ", cost=" + cost + "}";
  }
}
