package dev.sluice.core.policy;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.http.Cors;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.internal.Checks;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The one admission step every adapter calls for a request (the gateway's HTTP/1.1 relay, its
 * HTTP/2 streams and WebSocket upgrades, the Netty handler, the servlet filter, the Spring
 * interceptor): select the route and rules, decide, delay if the rule says so, and say what to
 * do ({@link Outcome}). It knows no transport: adapters read requests into a {@link RequestView}
 * and write what the outcome says; nothing is decided twice and nothing is answered elsewhere.
 *
 * <ul>
 *   <li>CORS preflights pass unchecked unless the responses limit them.
 *   <li>Exempt routes and allow-listed clients pass unchecked (the latter reported).
 *   <li>With a local store the decision is made inline and the outcome is final on return; with a
 *       remote one it is {@link Outcome#pending()} and its {@link Outcome#stage()} completes
 *       (never exceptionally) with the final one, on the store's thread.
 *   <li>A check that throws is a bug, never a limit: reported, and each rule's onStoreError
 *       decides, as for a store that cannot answer.
 *   <li>A refusal by a rule with a {@code delay}, whose token is due within what is left of it,
 *       with a waiting slot free for its key and the server ({@link DelayGate}), is
 *       {@link Outcome#delayed()}: the adapter waits {@link Outcome#delayNanos()} on its own
 *       timer and calls {@link #redecide}; the whole check runs again (a refused check
 *       consumes nothing, so no future token is reserved). docs/SEMANTICS.md has the numbers.
 *   <li>A final refusal by a rule whose action is {@code challenge} (policies selected through
 *       {@link Builder#policy}) goes to {@code ChallengeStep}: a browser's navigation gets
 *       {@link Action#CHALLENGE} with the page or the verdict on its answer, a client holding a
 *       clearance is decided again without the rule, any other request gets the refusal.
 *       See {@link Challenge}.
 *   <li>Every decision is reported to the listener once, when it is final, with its latency
 *       for a remote store (-1 for a local one: it takes less than the timing would); a
 *       refusal that started a ban is reported with the banned key.
 * </ul>
 *
 * <p>Immutable and thread-safe; build one per policy snapshot. An {@link Outcome} belongs to one
 * request and its adapter.
 */
public final class Admission {

  /** The shortest wait, so that a token due "now" cannot spin a timer. */
  private static final long MIN_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** What to do with a request. */
  public enum Action {
    /** Forward it; add the limit headers when {@link Outcome#limitHeaders()}. */
    FORWARD,
    /** Answer it with the refusal (429 by default) of {@link Outcome#decision()}. */
    REFUSE,
    /** A fail-closed rule could not be decided: answer 503 (ResponseSpec's unavailable answer). */
    UNAVAILABLE,
    /** Wait {@link Outcome#delayNanos()}, then {@link Admission#redecide}. */
    DELAY,
    /** Not known yet: {@link Outcome#stage()} completes with the outcome. */
    PENDING,
    /**
     * A rule whose action is {@code challenge} refused a browser: write {@link Outcome#answer()}
     * as it is (the puzzle page, or the verdict on an answer to one; see {@link Challenge}).
     */
    CHALLENGE
  }

  private final RateLimiter limiter;
  private final Function<RequestView, Check> selector;
  private final ResponseSpec responses;
  private final DecisionListener listener;
  private final DelayGate delays;
  private final boolean local;
  /** The policy's challenges; null when no rule challenges. */
  private final ChallengeStep challenges;

  private Admission(Builder b) {
    this.limiter = b.limiter;
    this.selector = b.selector;
    this.responses = b.responses;
    this.listener = b.listener;
    this.delays = b.delays;
    this.local = limiter.store().isLocal();
    this.challenges = b.challenges == null ? null : new ChallengeStep(this, b.challenges,
        responses.toBuilder().namesChallenge(true).build());
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The answers this admission's outcomes are written with. */
  public ResponseSpec responses() {
    return responses;
  }

  public DelayGate delays() {
    return delays;
  }

  public DecisionListener listener() {
    return listener;
  }

  /**
   * Admits {@code request} ({@code kind}: {@link DecisionListener#HTTP} or
   * {@link DecisionListener#WS_CONNECT}). Never throws on request input.
   */
  public Outcome admit(RequestView request, String kind) {
    if (!responses.limitPreflights() && Cors.isPreflight(request.method(),
        request.header("access-control-request-method") != null)) {
      return new Outcome(this, kind, null, null, Action.FORWARD);
    }
    Check check;
    try {
      check = selector.apply(request);
    } catch (RuntimeException e) {
      listener.decisionFailed(kind, List.of(), e);
      return new Outcome(this, kind, null, null, Action.FORWARD);
    }
    if (check == null || check.exempt() || check.rules().isEmpty()) {
      if (check != null && check.allowlisted()) {
        listener.allowlisted(kind);
      }
      return new Outcome(this, kind, check, null, Action.FORWARD);
    }
    Outcome o = new Outcome(this, kind, check, null, Action.PENDING);
    o.request = request;
    return decide(o);
  }

  /**
   * Admits a request by {@code check}, selected outside the policy's routes (a method-level
   * limit such as Spring's {@code @RateLimited}): decided, delayed and reported as any request.
   */
  public Outcome admit(Check check, String kind) {
    Checks.notNull(check, "check");
    if (check.exempt() || check.rules().isEmpty()) {
      return new Outcome(this, kind, check, null, Action.FORWARD);
    }
    return decide(new Outcome(this, kind, check, null, Action.PENDING));
  }

  /** Decides a delayed outcome again, now that its wait is over. */
  public Outcome redecide(Outcome delayed) {
    if (delayed.action != Action.DELAY || delayed.admission != this) {
      throw new IllegalArgumentException("outcome : " + delayed + " (expected: a delayed "
          + "outcome of this admission)");
    }
    return decide(delayed.copy(Action.PENDING));
  }

  private Outcome decide(Outcome o) {
    Check check = o.check;
    if (local) {
      Decision d;
      try {
        d = check.apply(limiter);
      } catch (RuntimeException e) {
        return failed(o, e);
      }
      // Not timed: a local decision takes less than the timing (and its histogram) would.
      return decided(o, d, -1);
    }
    long start = System.nanoTime();
    CompletionStage<Decision> stage;
    try {
      stage = check.applyAsync(limiter);
    } catch (RuntimeException e) {
      return failed(o, e);
    }
    CompletableFuture<Decision> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return decided(o, f.join(), System.nanoTime() - start);
    }
    o.stage = f.handle((d, e) -> e != null ? failed(o.copy(Action.PENDING), unwrap(e))
        : decided(o.copy(Action.PENDING), d, System.nanoTime() - start))
        .thenCompose(Admission::settled);
    return o;
  }

  /** {@code o} as a stage of its final outcome (a challenge may need the store again). */
  static CompletionStage<Outcome> settled(Outcome o) {
    return o.pending() ? o.stage : CompletableFuture.completedFuture(o);
  }

  private static Throwable unwrap(Throwable e) {
    return e instanceof java.util.concurrent.CompletionException && e.getCause() != null
        ? e.getCause() : e;
  }

  private Outcome failed(Outcome o, Throwable e) {
    List<Rule> rules = o.check.rules();
    listener.decisionFailed(o.kind, rules, e);
    o.release();
    Decision d = Decision.failed(rules);
    o.decision = d;
    o.action = d.allowed() ? Action.FORWARD : Action.UNAVAILABLE;
    return o;
  }

  private Outcome decided(Outcome o, Decision d, long nanos) {
    o.decision = d;
    if (!d.allowed() && !d.degraded() && delay(o, d)) {
      return o;
    }
    o.release();
    if (challenges != null && !d.allowed() && !d.degraded() && o.request != null) {
      Rule rule = ruleNamed(o.check.rules(), d.rule());
      if (rule != null && rule.action() == Rule.Action.CHALLENGE) {
        return challenges.refused(o, rule, d, nanos);
      }
    }
    report(o, d, nanos);
    o.action = d.allowed() ? Action.FORWARD : d.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
    return o;
  }

  /**
   * {@code o}'s check decided again without {@code rule} (whose clearance the client holds): the
   * outcome of the rules left, reported as any; the refusal by {@code rule} is not.
   */
  Outcome decideWithout(Outcome o, Rule rule) {
    List<Rule> rest = new java.util.ArrayList<>(o.check.rules());
    rest.remove(rule);
    Check reduced = Check.of(List.copyOf(rest), o.check.identity(), o.check.cost(),
        o.check.route());
    Outcome r = new Outcome(this, o.kind, reduced, null, Action.PENDING);
    r.request = o.request;
    if (rest.isEmpty()) {
      r.action = Action.FORWARD;
      return r;
    }
    return decide(r);
  }

  RateLimiter limiter() {
    return limiter;
  }

  /** True when {@code o} now waits for its token (see the class comment). */
  private boolean delay(Outcome o, Decision d) {
    Rule rule = ruleNamed(o.check.rules(), d.rule());
    if (rule == null || rule.delayNanos() == 0) {
      return false;
    }
    long wait = Math.max(d.retryAfterNanos(), MIN_WAIT_NANOS);
    if (o.slot == null) {
      if (wait > rule.delayNanos()) {
        return false;
      }
      String key = rule.name() + '\n' + rule.keyFor(o.check.identity());
      if (!delays.tryAcquire(key, rule.delayQueue())) {
        return false;
      }
      o.slot = key;
      o.budgetNanos = rule.delayNanos();
      listener.delayed(o.kind, rule.name());
    }
    if (wait > o.budgetNanos) {
      return false;
    }
    o.budgetNanos -= wait;
    o.delayNanos = wait;
    o.action = Action.DELAY;
    return true;
  }

  void report(Outcome o, Decision d, long nanos) {
    if (d.rule() == null && !d.shadowRefused()) {
      return;
    }
    List<Rule> rules = o.check.rules();
    listener.decision(o.kind, rules, d, nanos);
    if (d.banApplied()) {
      Rule rule = ruleNamed(rules, d.rule());
      listener.banApplied(o.kind, d, rule == null ? null : rule.keyText(o.check.identity()));
    }
    if (d.shadowRefused()) {
      for (int i = 0; i < rules.size(); i++) {
        Rule rule = rules.get(i);
        if (rule.mode() == Mode.SHADOW && d.refusedBy(i)) {
          listener.shadowRefused(o.kind, rule, rule.keyText(o.check.identity()));
        }
      }
    }
  }

  static Rule ruleNamed(List<Rule> rules, String name) {
    if (name == null) {
      return null;
    }
    for (Rule rule : rules) {
      if (rule.name().equals(name)) {
        return rule;
      }
    }
    return null;
  }

  /**
   * What {@link Admission} says of one request. Final outcomes ({@link Action#FORWARD},
   * {@link Action#REFUSE}, {@link Action#UNAVAILABLE}) carry the decision; a delayed one holds a
   * waiting slot until it is decided again or {@linkplain #cancel() cancelled}.
   */
  public static final class Outcome {
    private final Admission admission;
    private final String kind;
    private final Check check;
    private Decision decision;
    private Action action;
    private CompletionStage<Outcome> stage;
    private String slot;
    private long budgetNanos;
    private long delayNanos;
    /** The request admitted, for a challenge (null for a check made outside the policy). */
    private RequestView request;
    /** A challenge's answer, its step and why; a refusal's answers when it names a challenge. */
    private dev.sluice.core.http.Answer answer;
    private String challengeStep;
    private String challengeReason;
    private ResponseSpec responses;

    private Outcome(Admission admission, String kind, Check check, Decision decision,
        Action action) {
      this.admission = admission;
      this.kind = kind;
      this.check = check;
      this.decision = decision;
      this.action = action;
    }

    /**
     * The same request's next step: a delay's slot and budget go with it. Synchronized with
     * {@link #release}: a remote store's thread copies while the adapter may cancel.
     */
    private synchronized Outcome copy(Action next) {
      Outcome o = new Outcome(admission, kind, check, decision, next);
      o.request = request;
      o.slot = slot;
      o.budgetNanos = budgetNanos;
      slot = null;
      return o;
    }

    public Action action() {
      return action;
    }

    public boolean pending() {
      return action == Action.PENDING;
    }

    public boolean delayed() {
      return action == Action.DELAY;
    }

    /** Whether the request goes on: forward it. */
    public boolean forward() {
      return action == Action.FORWARD;
    }

    /** A pending outcome's completion (never exceptional); null for the others. */
    public CompletionStage<Outcome> stage() {
      return stage;
    }

    /** What was selected: null when nothing was (a preflight, a selector that failed). */
    public Check check() {
      return check;
    }

    /** The matched route's name, or null. */
    public String route() {
      return check == null ? null : check.route();
    }

    /** The decision; null when no rule was checked (exempt, preflight, no rule). */
    public Decision decision() {
      return decision;
    }

    public String kind() {
      return kind;
    }

    /**
     * The answers of the admission that decided (its policy snapshot's); for a refusal by a rule
     * that challenges, the same answers naming {@code "action":"challenge"}.
     */
    public ResponseSpec responses() {
      return responses != null ? responses : admission.responses;
    }

    /** The answer to write for {@link Action#CHALLENGE}; null for the other actions. */
    public dev.sluice.core.http.Answer answer() {
      return answer;
    }

    /**
     * What the challenge step did, as its metrics name it: {@code issued} (the puzzle page),
     * {@code solved}, {@code failed}, {@code replayed}, {@code refused} (its own limit),
     * {@code cleared} (a clearance let the request past the rule), or null when no challenge
     * was involved. A non-browser refused by a challenging rule: null, and a REFUSE.
     */
    public String challenge() {
      return challengeStep;
    }

    /**
     * Why: for {@code issued}, the clearance the request had ({@code none}, {@code expired},
     * {@code invalid}); for {@code failed}, what was wrong with the answer; otherwise null.
     */
    public String challengeReason() {
      return challengeReason;
    }

    RequestView request() {
      return request;
    }

    Admission admission() {
      return admission;
    }

    /** Ends this outcome with the challenge's {@code answer}. */
    void challenged(dev.sluice.core.http.Answer a, String step, String reason) {
      this.answer = a;
      this.challengeStep = step;
      this.challengeReason = reason;
      this.action = Action.CHALLENGE;
    }

    /** Ends this outcome as a refusal answered by {@code spec}. */
    void refused(ResponseSpec spec) {
      this.responses = spec;
      this.action = decision.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
    }

    /** Ends this outcome as {@code action} with {@code d} (a store the challenge asked failed). */
    void end(Action action, Decision d) {
      this.decision = d;
      this.action = action;
    }

    /** A pending twin of this request's outcome, completed by {@code stage}. */
    Outcome pendingOn(CompletionStage<Outcome> stage) {
      Outcome p = new Outcome(admission, kind, check, decision, Action.PENDING);
      p.request = request;
      p.stage = stage;
      return p;
    }

    /** How long a delayed request waits before {@link Admission#redecide}. */
    public long delayNanos() {
      return delayNanos;
    }

    /**
     * Whether a forwarded response gets the limit headers: an enforcing rule decided (a shadow
     * rule, or no rule at all, adds none: nothing is enforced that a client should back off from).
     */
    public boolean limitHeaders() {
      if (decision == null || decision.rule() == null || check == null) {
        return false;
      }
      Rule rule = ruleNamed(check.rules(), decision.rule());
      return rule != null && rule.mode() != Mode.SHADOW;
    }

    /** The rule that refused, or null. */
    public Rule refusingRule() {
      return decision == null || decision.allowed() || check == null ? null
          : ruleNamed(check.rules(), decision.rule());
    }

    /** The store key of {@code rule} for this request's identity, as bans are logged. */
    public String keyOf(Rule rule) {
      return rule.keyFor(check.identity());
    }

    /** The request went away while delayed: its waiting slot is given back now. */
    public void cancel() {
      release();
    }

    private synchronized void release() {
      if (slot != null) {
        admission.delays.release(slot);
        slot = null;
      }
    }

    @Override
    public String toString() {
      return "Outcome{" + action + (decision == null ? "" : ", " + decision)
          + (check == null ? "" : ", route=" + check.route()) + "}";
    }
  }

  /** Builds an {@link Admission}. */
  public static final class Builder {
    private RateLimiter limiter;
    private Function<RequestView, Check> selector;
    private ResponseSpec responses = ResponseSpec.defaults();
    private DecisionListener listener = DecisionListener.none();
    private DelayGate delays;
    private Challenges challenges;

    private Builder() {}

    public Builder limiter(RateLimiter limiter) {
      this.limiter = Checks.notNull(limiter, "limiter");
      return this;
    }

    /** Selects by {@code policy}: its routes, rules and key dimensions. */
    public Builder policy(Policy policy) {
      Checks.notNull(policy, "policy");
      this.selector = policy::select;
      this.challenges = policy.challenges();
      return this;
    }

    /**
     * Selects by any function (a fixed rule, a test); {@link #policy} for a policy. A rule that
     * challenges refuses instead when selected this way: challenges are the policy's.
     */
    public Builder selector(Function<RequestView, Check> selector) {
      this.selector = Checks.notNull(selector, "selector");
      this.challenges = null;
      return this;
    }

    public Builder responses(ResponseSpec responses) {
      this.responses = Checks.notNull(responses, "responses");
      return this;
    }

    public Builder listener(DecisionListener listener) {
      this.listener = listener == null ? DecisionListener.none() : listener;
      return this;
    }

    /** The waiting slots of delayed requests; default: a gate of its own. */
    public Builder delays(DelayGate delays) {
      this.delays = Checks.notNull(delays, "delays");
      return this;
    }

    public Admission build() {
      if (limiter == null) {
        throw Checks.invalid("limiter", "null", "a RateLimiter");
      }
      if (selector == null) {
        throw Checks.invalid("policy", "null", "a policy or a selector");
      }
      if (delays == null) {
        delays = DelayGate.create(DelayGate.DEFAULT_MAX_WAITING);
      }
      return new Admission(this);
    }
  }
}
