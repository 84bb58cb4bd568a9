package dev.sluice.core.policy;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.MutableDecision;
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

  private static final Check ALLOWLISTED =
      new Check(List.of(), Identity.empty(), 1, null, true, true);
  private static final Check DENIED = new Check(List.of(), Identity.empty(), 1, null, true,
      false);

  private final List<Rule> rules;
  private final Identity identity;
  private final long cost;
  private final String route;
  private final boolean exempt;
  private final boolean allowlisted;
  /**
   * What the route selects besides {@link #rules}: counted rules, leases, a human check (and the
   * client's address for its verifier); null for a plain check. One field, so a plain check
   * costs no more than it did (the relay's refusal is measured in bytes).
   */
  private Extras extras;

  /** A route's escalation parts; shared per route, except where a human check needs the address. */
  record Extras(Policy.Selection selection, String remoteIp) {}

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

  /**
   * A check of {@code rules} made outside a policy's routes (a method-level limit).
   *
   * @throws IllegalArgumentException for a rule counted on responses or a concurrency rule:
   *     only a route, whose adapter sees the response, can apply one
   */
  public static Check of(List<Rule> rules, Identity identity, long cost) {
    for (Rule rule : rules) {
      if (!rule.countedOnRequest()) {
        throw dev.sluice.core.internal.Checks.invalid("rule", "'" + rule.name() + "'",
            "a rule counted when its request is decided (not countStatus, a cooldown or a "
                + "concurrency cap, which only routes apply)");
      }
    }
    return new Check(List.copyOf(rules), identity, cost, null, false);
  }

  static Check of(List<Rule> rules, Identity identity, long cost, String route) {
    return new Check(rules, identity, cost, route, false);
  }

  /** A route's check with the escalation parts besides its rules. */
  static Check of(Policy.Selection s, Identity identity, long cost, String route,
      String remoteIp) {
    Check c = new Check(s.rules(), identity, cost, route, false);
    c.extras = remoteIp == null ? s.extras() : new Extras(s, remoteIp);
    return c;
  }

  /** This check with {@code fewer} rules and the same escalation parts. */
  Check withRules(List<Rule> fewer) {
    Check c = new Check(fewer, identity, cost, route, false);
    c.extras = extras;
    return c;
  }

  /** True when this is a plain check of exactly these values (the same rule list and route). */
  boolean is(List<Rule> rules, Identity identity, long cost, String route) {
    return extras == null && !exempt && this.rules == rules && this.identity == identity
        && this.cost == cost && java.util.Objects.equals(this.route, route);
  }

  static Check deniedCheck() {
    return DENIED;
  }

  /** The check of an exempt route, naming it (for the verdict's route). */
  static Check exemptCheck(String route) {
    return new Check(List.of(), Identity.empty(), 1, route, true);
  }

  static Check allowlistedCheck() {
    return ALLOWLISTED;
  }

  /** The rules the store decides now, as one atomic step. */
  public List<Rule> rules() {
    return rules;
  }

  /** Rules read now and counted on the response ({@link Rule#countStatus()}, cooldowns). */
  public List<Rule> counted() {
    return extras == null ? List.of() : extras.selection().counted();
  }

  /** Concurrency rules, each holding a lease while the request is in flight. */
  public List<Rule> leases() {
    return extras == null ? List.of() : extras.selection().leases();
  }

  /** The human check the request must pass, or null. */
  public HumanCheck humanCheck() {
    return extras == null ? null : extras.selection().humanCheck();
  }

  /** The resolved client address sent to a human check's verifier, or null. */
  public String remoteIp() {
    return extras == null ? null : extras.remoteIp();
  }

  /** True when the client is on the policy's {@code deny} list. */
  public boolean denied() {
    return this == DENIED;
  }

  /** True when nothing besides {@link #rules()} applies: the plain, fast path. */
  boolean plain() {
    return extras == null;
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

  /** {@link #apply}, written into {@code into} (which it returns) when a rule applies. */
  Decision apply(RateLimiter limiter, MutableDecision into) {
    if (rules.isEmpty()) {
      return Decision.unlimited();
    }
    limiter.check(rules, identity, cost, into);
    return into;
  }

  /** {@link #apply} without waiting on a remote store; see {@link RateLimiter#checkAsync}. */
  public CompletionStage<Decision> applyAsync(RateLimiter limiter) {
    return rules.isEmpty() ? CompletableFuture.completedFuture(Decision.unlimited())
        : limiter.checkAsync(rules, identity, cost);
  }

  @Override
  public String toString() {
    return this == DENIED ? "Check{denied}" : allowlisted ? "Check{allowlisted}" : exempt ? "Check{exempt}" : "Check{route=" + route + ", rules=" + rules.size()
        + ", identity=" + identity + ", cost=" + cost + "}";
  }
}
