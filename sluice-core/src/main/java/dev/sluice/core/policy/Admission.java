package dev.sluice.core.policy;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.Mode;
import dev.sluice.core.MutableDecision;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Reservation;
import dev.sluice.core.Verdict;
import dev.sluice.core.http.Cors;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
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
 *   <li>Escalation, in this order, each only where the route has it: a client on the policy's
 *       {@code deny} list is {@link Action#DENY denied} (403, never forwarded); rules counted on
 *       responses ({@link Rule#countStatus()}, cooldowns) are reserved: an exhausted, banned or
 *       locked key refuses, and so does a request past what the requests in flight leave
 *       ({@link Reservation}); concurrency rules take a lease each (released by
 *       {@link Outcome#ended()}), refusing when full; then the rules decide as one step (a
 *       refusal gives back what was reserved and leased: a refused request holds nothing); then
 *       a human check makes the outcome {@link Action#VERIFY}: the adapter reads the token and
 *       calls {@link #verify}. When the response's head arrives the adapter calls
 *       {@link Outcome#responded(int)}, which settles the reservations by its status; a
 *       forwarded request that ends without one ({@link Outcome#ended()}: the client hung up and
 *       the adapter could not learn the answer) settles them as failures.
 * </ul>
 *
 * <p>Immutable and thread-safe; build one per policy snapshot. An {@link Outcome} belongs to one
 * request and its adapter. An adapter that admits one request at a time per connection (the
 * HTTP/1.1 relay) passes a {@link Scratch} of its own: with a local store a plain request (no
 * escalation) then allocates nothing, neither refused nor allowed.
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
     * Answer 403 and never forward: the client is on the deny list, or failed a human check
     * ({@link Outcome#denial()} says which).
     */
    DENY,
    /**
     * The route's human check must pass first: read the token of {@link Outcome#humanCheck()}
     * (a header, or the body) and call {@link Admission#verify}.
     */
    VERIFY,
    /**
     * A rule whose action is {@code challenge} refused a browser: write {@link Outcome#answer()}
     * as it is (the puzzle page, or the verdict on an answer to one; see {@link Challenge}).
     */
    CHALLENGE
  }

  /** A reservation's life unless an adapter sets it: longer than any exchange it waits for. */
  public static final java.time.Duration DEFAULT_RESERVATION_TTL = java.time.Duration.ofMinutes(5);

  /** The 403's reason for a client on the deny list. */
  public static final String DENY_LIST = "deny list";

  private final RateLimiter limiter;
  private final Function<RequestView, Check> selector;
  /** The policy the selector selects by; null for a selector of another kind. */
  private final Policy policy;
  private final ResponseSpec responses;
  private final DecisionListener listener;
  private final DelayGate delays;
  private final boolean local;
  private final HumanVerifier verifier;
  /** The policy's challenges; null when no rule challenges. */
  private final ChallengeStep challenges;
  private final long reservationTtlNanos;

  private Admission(Builder b) {
    this.verifier = b.verifier;
    this.limiter = b.limiter;
    this.selector = b.selector;
    this.policy = b.policy;
    this.responses = b.responses;
    this.listener = b.listener;
    this.delays = b.delays;
    this.local = limiter.store().isLocal();
    this.reservationTtlNanos = b.reservationTtl.toNanos();
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
    return admit(request, kind, null);
  }

  /**
   * {@link #admit(RequestView, String)} reusing {@code scratch} (null: none): the outcome is
   * valid until the next admission with the same scratch, and so is its decision, which
   * listeners see only while they are called. The adapter ends one request's outcome
   * ({@link Outcome#ended()}) before it admits the next one with the same scratch.
   */
  public Outcome admit(RequestView request, String kind, Scratch scratch) {
    Scratch reuse = local ? scratch : null;
    if (!responses.limitPreflights() && Cors.isPreflight(request.method(),
        request.header("access-control-request-method") != null)) {
      return outcome(reuse, kind, null, Action.FORWARD);
    }
    Check check;
    try {
      check = reuse != null && policy != null ? policy.select(request, reuse.check)
          : selector.apply(request);
    } catch (RuntimeException e) {
      listener.decisionFailed(kind, List.of(), e);
      return outcome(reuse, kind, null, Action.FORWARD);
    }
    if (reuse != null) {
      reuse.check = check;
    }
    if (check != null && check.denied()) {
      listener.denied(kind);
      Outcome o = new Outcome(this, kind, check, null, Action.DENY);
      o.esc().denial = DENY_LIST;
      return o;
    }
    if (check == null || check.exempt() || check.rules().isEmpty() && check.plain()) {
      if (check != null && check.allowlisted()) {
        listener.allowlisted(kind);
      }
      return outcome(reuse, kind, check, Action.FORWARD);
    }
    Outcome o = outcome(check.plain() ? reuse : null, kind, check, Action.PENDING);
    if (challenges != null) {
      o.esc().request = request;
    }
    return check.plain() ? decide(o) : guard(o, () -> reserve(o, 0));
  }

  /** A new outcome, or {@code reuse}'s, reset: it decides into the scratch's decision. */
  private Outcome outcome(Scratch reuse, String kind, Check check, Action action) {
    if (reuse == null) {
      return new Outcome(this, kind, check, null, action);
    }
    Outcome o = reuse.outcome;
    if (o == null || o.admission != this || !o.kind.equals(kind)) {
      o = new Outcome(this, kind, check, null, action);
      o.into = reuse.decision;
      reuse.outcome = o;
      return o;
    }
    o.check = check;
    o.decision = null;
    o.action = action;
    o.stage = null;
    o.budgetNanos = 0;
    o.delayNanos = 0;
    o.esc = null;
    return o;
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
        d = o.into == null ? check.apply(limiter) : check.apply(limiter, o.into);
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
    Decision d = Decision.failed(rules);
    o.decision = d;
    if (d.allowed()) {
      o.releaseDelay();
      return afterRules(o);
    }
    o.release();
    o.action = Action.UNAVAILABLE;
    return o;
  }

  private Outcome decided(Outcome o, Decision d, long nanos) {
    o.decision = d;
    if (!d.allowed() && !d.degraded() && delay(o, d)) {
      return o;
    }
    if (challenges != null && !d.allowed() && !d.degraded() && o.request() != null) {
      Rule rule = ruleNamed(o.check.rules(), d.rule());
      if (rule != null && rule.action() == Rule.Action.CHALLENGE) {
        Decision kept = d instanceof MutableDecision m ? m.snapshot() : d;
        o.decision = kept;
        return challenges.refused(o, rule, kept, nanos);
      }
    }
    report(o, o.check.rules(), d, nanos);
    if (d.allowed()) {
      o.releaseDelay();
      return afterRules(o);
    }
    o.release();
    o.action = d.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
    return o;
  }

  /**
   * {@code o}'s check decided again without {@code rule} (whose clearance the client holds): the
   * outcome of the rules left, reported as any; the refusal by {@code rule} is not. What the
   * request holds (leases, a delay's slot) goes with it.
   */
  Outcome decideWithout(Outcome o, Rule rule) {
    List<Rule> rest = new ArrayList<>(o.check.rules());
    rest.remove(rule);
    Outcome r = o.copy(o.check.withRules(List.copyOf(rest)));
    if (rest.isEmpty()) {
      r.releaseDelay();   // allowed: as decided() does for an allowed decision
      return afterRules(r);
    }
    return decide(r);
  }

  RateLimiter limiter() {
    return limiter;
  }

  // Escalation: the phases before and after the rules (see the class comment).

  /** Runs {@code step}; a step that throws is a bug, decided as a store failure of the rules. */
  private Outcome guard(Outcome o, java.util.function.Supplier<Outcome> step) {
    try {
      return step.get();
    } catch (RuntimeException e) {
      o.release();
      return failed(o, e);
    }
  }

  /**
   * Goes on with {@code next} once {@code stage} completes: at once when it already has (an
   * in-memory store), else the outcome is pending and its stage completes with the final one.
   * {@code stage} must not complete exceptionally.
   */
  <T> Outcome then(Outcome o, CompletionStage<T> stage,
      BiFunction<Outcome, T, Outcome> next) {
    CompletableFuture<T> f = stage.toCompletableFuture();
    if (f.isDone()) {
      T value = f.join();
      return guard(o, () -> next.apply(o, value));
    }
    o.action = Action.PENDING;
    o.stage = f.thenCompose(v -> {
      Outcome x = o.copy(Action.PENDING);
      Outcome n = guard(x, () -> next.apply(x, v));
      return n.pending() ? n.stage() : CompletableFuture.completedFuture(n);
    });
    return o;
  }

  /**
   * Reserves each rule counted on responses ({@link Reservation}): a key that is exhausted,
   * banned or locked refuses now, and so does a request past what is left of the limit while
   * others hold the rest in flight; an admitted request holds its share until its answer settles
   * it ({@link Outcome#responded}), so parallel requests never widen the limit.
   */
  private Outcome reserve(Outcome o, int from) {
    List<Rule> counted = o.check.counted();
    int i = from;
    while (i < counted.size() && counted.get(i).mode() == Mode.OFF) {
      i++;
    }
    if (i == counted.size()) {
      return leases(o, 0);
    }
    Rule rule = counted.get(i);
    int at = i;
    CompletionStage<Reservation> held = safe(() -> limiter.store().reserveAsync(rule,
        o.check.identity(), o.check.cost(), reservationTtlNanos)).handle((r, e) -> e != null
            ? null : r);
    return then(o, held, (x, r) -> {
      if (r != null && r.held()) {
        x.reserved(rule, r.id());
        return reserve(x, at + 1);
      }
      Decision d = r == null ? Decision.failed(List.of(rule)) : Decision.of(rule, r.verdict());
      report(x, List.of(rule), d, -1);
      if (d.allowed()) {
        x.phaseAllowed(d);
        return reserve(x, at + 1);   // a shadow rule, or a store failure that fails open
      }
      x.release();
      x.decision = d;
      x.action = d.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
      return x;
    });
  }

  /** Takes a lease per concurrency rule; a full one refuses (giving back those taken). */
  private Outcome leases(Outcome o, int from) {
    List<Rule> leases = o.check.leases();
    int i = from;
    while (i < leases.size() && leases.get(i).mode() == Mode.OFF) {
      i++;
    }
    if (i == leases.size()) {
      return o.check.rules().isEmpty() ? afterRules(o) : decide(o);
    }
    Rule rule = leases.get(i);
    int at = i;
    String key = rule.keyFor(o.check.identity());
    CompletionStage<Long> take = safe(() -> limiter.store().acquireAsync(key, rule.concurrency(),
        rule.leaseTtlNanos())).handle((id, e) -> e != null ? -1L : id);
    return then(o, take, (x, id) -> {
      if (id > 0) {
        x.hold(rule, key, id);
        listener.inFlight(rule.name(), 1);
        return leases(x, at + 1);
      }
      Decision d = id == 0
          ? Decision.refusal(rule, rule.name(), rule.concurrency(), TimeUnit.SECONDS.toNanos(1),
              false)
          : Decision.failed(List.of(rule));
      report(x, List.of(rule), d, -1);
      if (d.allowed()) {
        x.phaseAllowed(d);
        return leases(x, at + 1);   // a shadow cap, or a store failure that fails open
      }
      x.release();
      x.decision = d;
      x.action = d.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
      return x;
    });
  }

  /** The rules allowed: a human check next, if the route has one, else forward. */
  private Outcome afterRules(Outcome o) {
    HumanCheck h = o.check.humanCheck();
    if (h == null) {
      o.action = Action.FORWARD;
      return o;
    }
    if (verifier == null) {
      // An adapter that cannot verify (the servlet filter): never forwarded unverified.
      listener.humanCheck(h.name(), "error", "no verifier in this adapter");
      o.release();
      o.decision = Decision.failed(List.of(h.unavailable()));
      o.action = Action.UNAVAILABLE;
      return o;
    }
    o.action = Action.VERIFY;
    return o;
  }

  /**
   * Verifies the token of a {@link Action#VERIFY} outcome ({@code null}: the request had none)
   * and says what to do: forward; deny (403: no token, a failed or replayed one); refuse (the
   * check's own limit); unavailable (the verifier did not answer in time and the check's
   * {@code onError} is deny); pending with a stage, as from {@link #admit}. Never waits.
   */
  public Outcome verify(Outcome verifying, String token) {
    if (verifying.action != Action.VERIFY || verifying.admission != this) {
      throw new IllegalArgumentException("outcome : " + verifying + " (expected: an outcome of "
          + "this admission that says VERIFY)");
    }
    Outcome o = verifying.copy(Action.PENDING);
    HumanCheck h = o.check.humanCheck();
    if (token == null) {
      listener.humanCheck(h.name(), "missing", null);
      return deny(o, "human check required");
    }
    return guard(o, () -> {
      CompletionStage<Decision> seen = limiter.checkAsync(h.rules(),
          HumanCheck.withToken(o.check.identity(), token), 1);
      return then(o, seen, (x, d) -> seen(x, h, d, token));
    });
  }

  private Outcome seen(Outcome o, HumanCheck h, Decision d, String token) {
    report(o, h.rules(), d, -1);
    if (!d.allowed()) {
      if (d.degraded()) {
        listener.humanCheck(h.name(), "error", "the store could not answer");
      } else if (!h.limit().name().equals(d.rule())) {
        listener.humanCheck(h.name(), "replayed", null);
        return deny(o, "human check replayed");
      }
      o.release();
      o.decision = d;
      o.action = d.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
      return o;
    }
    CompletionStage<HumanCheck.Verification> asked;
    try {
      asked = verifier.verify(h, token, o.check.remoteIp());
    } catch (RuntimeException e) {
      asked = CompletableFuture.failedFuture(e);
    }
    // A copy: the deadline must not complete the verifier's own future.
    CompletionStage<HumanCheck.Verification> answer = asked.toCompletableFuture().copy()
        .orTimeout(h.deadline().toNanos(), TimeUnit.NANOSECONDS)
        .handle((v, e) -> e == null && v != null ? v : HumanCheck.Verification.error(
            e == null ? "no answer" : unwrap(e) instanceof TimeoutException
                ? "no answer within " + h.deadline().toMillis() + " ms" : String.valueOf(unwrap(e))));
    return then(o, answer, (x, v) -> verified(x, h, v));
  }

  private Outcome verified(Outcome o, HumanCheck h, HumanCheck.Verification v) {
    switch (v.result()) {
      case PASSED -> {
        listener.humanCheck(h.name(), "passed", null);
        o.action = Action.FORWARD;
        return o;
      }
      case FAILED -> {
        listener.humanCheck(h.name(), "failed", v.reason());
        return deny(o, "human check failed");
      }
      default -> {
        listener.humanCheck(h.name(), "error", v.reason());
        if (h.onError() == OnStoreError.ALLOW) {
          o.action = Action.FORWARD;
          return o;
        }
        o.release();
        o.decision = Decision.failed(List.of(h.unavailable()));
        o.action = Action.UNAVAILABLE;
        return o;
      }
    }
  }

  /**
   * What an outcome holds beyond its decision, made only when it holds something: a delayed
   * request's waiting slot, a denial's reason, concurrency leases, whether its response was
   * counted. Kept apart so that a plain outcome is no larger than it was (a refusal's bytes are
   * measured: RelayBenchmark).
   */
  private static final class Escalated {
    /** The delay gate's key of a waiting request. */
    String slot;
    String denial;
    /** Concurrency leases held: rule, key and id, three entries each. */
    ArrayList<Object> leases;
    /** Reservations of rules counted on responses, not settled yet: rule and id, two each. */
    ArrayList<Object> reserved;
    /** Whether the request waited for its token (a rule's delay) on its way. */
    boolean waited;
    /** Whether a challenge's clearance let the request past its rule. */
    boolean cleared;
    /** Whether a phase before the rules allowed only because its rule is shadow, or degraded. */
    boolean shadow;
    boolean degraded;
    /** The request admitted, for a challenge (set only when the policy has challenges). */
    RequestView request;
    /** A challenge's answer, its step and why; a refusal's answers when it names a challenge. */
    dev.sluice.core.http.Answer answer;
    String challengeStep;
    String challengeReason;
    ResponseSpec responses;
  }

  private static Outcome deny(Outcome o, String why) {
    o.release();
    o.esc().denial = why;
    o.action = Action.DENY;
    return o;
  }

  /** A store call that throws on the calling thread, as a failed stage. */
  private static <T> CompletableFuture<T> safe(java.util.function.Supplier<CompletionStage<T>> call) {
    try {
      return call.get().toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Ends one reservation of a counted rule: by the answer's {@code status} (for a cooldown a
   * listed status is a failure and 100..399 a success; for any other rule a listed status spends
   * the cost), or as a failure when the answer never came ({@code status} 0), or with nothing
   * counted ({@code status} -1: the request was not forwarded). Reported; never waits.
   */
  void settle(Outcome o, Rule rule, long id, int status) {
    Reservation.Settlement how;
    String result;
    if (status == -1) {
      how = Reservation.Settlement.NONE;
      result = null;
    } else if (status == 0) {
      how = Reservation.Settlement.FAILURE;
      result = "unanswered";
    } else if (rule.countStatus().contains(status)) {
      how = Reservation.Settlement.FAILURE;
      result = "counted";
    } else if (rule.cooldown() != null && status >= 100 && status < 400) {
      how = Reservation.Settlement.SUCCESS;
      result = rule.resetsOnSuccess(o.check.identity()) ? "reset" : "skipped";
    } else {
      how = Reservation.Settlement.NONE;
      result = "skipped";
    }
    if (result != null) {
      listener.responseCounted(rule.name(), status, result);
    }
    safe(() -> limiter.store().settleAsync(rule, o.check.identity(), id, o.check.cost(), how))
        .thenAccept(v -> {
          if (v.banApplied()) {
            listener.banApplied(o.kind, Decision.of(rule, v), rule.keyText(o.check.identity()));
          }
        });
  }

  /** Gives a lease back. */
  void release(Rule rule, String key, long id) {
    listener.inFlight(rule.name(), -1);
    try {
      limiter.store().releaseAsync(key, id);
    } catch (RuntimeException e) {
      // The lease expires on its own after its time-to-live.
    }
  }

  /** True when {@code o} now waits for its token (see the class comment). */
  private boolean delay(Outcome o, Decision d) {
    Rule rule = ruleNamed(o.check.rules(), d.rule());
    if (rule == null || rule.delayNanos() == 0) {
      return false;
    }
    long wait = Math.max(d.retryAfterNanos(), MIN_WAIT_NANOS);
    if (o.slot() == null) {
      if (wait > rule.delayNanos()) {
        return false;
      }
      String key = rule.name() + '\n' + rule.keyFor(o.check.identity());
      if (!delays.tryAcquire(key, rule.delayQueue())) {
        return false;
      }
      o.esc().slot = key;
      o.budgetNanos = rule.delayNanos();
      listener.delayed(o.kind, rule.name());
    }
    if (wait > o.budgetNanos) {
      return false;
    }
    o.budgetNanos -= wait;
    o.delayNanos = wait;
    o.action = Action.DELAY;
    o.esc().waited = true;
    return true;
  }

  void report(Outcome o, List<Rule> rules, Decision d, long nanos) {
    if (d.rule() == null && !d.shadowRefused()) {
      return;
    }
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
    for (int i = 0; i < rules.size(); i++) {
      if (rules.get(i).name().equals(name)) {
        return rules.get(i);
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
    private Check check;
    /** A scratch's decision, written by each check of a reused outcome; null otherwise. */
    private MutableDecision into;
    private Decision decision;
    private Action action;
    private CompletionStage<Outcome> stage;
    private long budgetNanos;
    private long delayNanos;
    /** See {@link Escalated}; null until needed. */
    private Escalated esc;

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
    private Outcome copy(Action next) {
      return copy(next, check);
    }

    /** {@link #copy(Action)} pending, checking {@code other} (a check with fewer rules). */
    private Outcome copy(Check other) {
      return copy(Action.PENDING, other);
    }

    private synchronized Outcome copy(Action next, Check other) {
      Outcome o = new Outcome(admission, kind, other, decision, next);
      o.budgetNanos = budgetNanos;
      o.esc = esc;
      esc = null;
      return o;
    }

    /** A delayed request's waiting slot (its rule and key), or null. */
    private String slot() {
      return esc == null ? null : esc.slot;
    }

    private Escalated esc() {
      if (esc == null) {
        esc = new Escalated();
      }
      return esc;
    }

    private synchronized void hold(Rule rule, String key, long id) {
      Escalated e = esc();
      if (e.leases == null) {
        e.leases = new ArrayList<>(3);
      }
      e.leases.add(rule);
      e.leases.add(key);
      e.leases.add(id);
    }

    private synchronized void reserved(Rule rule, long id) {
      Escalated e = esc();
      if (e.reserved == null) {
        e.reserved = new ArrayList<>(2);
      }
      e.reserved.add(rule);
      e.reserved.add(id);
    }

    /**
     * Settles every reservation still held, once: by {@code status} (> 0), as unanswered (0) or
     * with nothing counted (-1); see {@link Admission#settle}.
     */
    private void settle(int status) {
      ArrayList<Object> held;
      synchronized (this) {
        if (esc == null || esc.reserved == null) {
          return;
        }
        held = esc.reserved;
        esc.reserved = null;
      }
      for (int i = 0; i < held.size(); i += 2) {
        admission.settle(this, (Rule) held.get(i), (Long) held.get(i + 1), status);
      }
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
      return esc != null && esc.responses != null ? esc.responses : admission.responses;
    }

    /** The answer to write for {@link Action#CHALLENGE}; null for the other actions. */
    public dev.sluice.core.http.Answer answer() {
      return esc == null ? null : esc.answer;
    }

    /**
     * What the challenge step did, as its metrics name it: {@code issued} (the puzzle page),
     * {@code solved}, {@code failed}, {@code replayed}, {@code refused} (its own limit), or
     * null when no challenge answered (a clearance that let the request past the rule is told
     * to the listener as {@code cleared}; a non-browser refused by a challenging rule: null, and
     * a REFUSE).
     */
    public String challenge() {
      return esc == null ? null : esc.challengeStep;
    }

    /**
     * Why: for {@code issued}, the clearance the request had ({@code none}, {@code expired},
     * {@code invalid}); for {@code failed}, what was wrong with the answer; otherwise null.
     */
    public String challengeReason() {
      return esc == null ? null : esc.challengeReason;
    }

    RequestView request() {
      return esc == null ? null : esc.request;
    }

    Admission admission() {
      return admission;
    }

    /**
     * Ends this outcome with the challenge's {@code answer}; never forwarded, so what the request
     * holds goes back, as for any refusal.
     */
    void challenged(dev.sluice.core.http.Answer a, String step, String reason) {
      release();
      Escalated e = esc();
      e.answer = a;
      e.challengeStep = step;
      e.challengeReason = reason;
      this.action = Action.CHALLENGE;
    }

    /** Ends this outcome as a refusal answered by {@code spec}. */
    void refused(ResponseSpec spec) {
      release();
      esc().responses = spec;
      this.action = decision.degraded() ? Action.UNAVAILABLE : Action.REFUSE;
    }

    /** Ends this outcome as {@code action} with {@code d} (a store the challenge asked failed). */
    void end(Action action, Decision d) {
      release();
      this.decision = d;
      this.action = action;
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
      Rule rule = rule(decision.rule());
      return rule != null && rule.mode() != Mode.SHADOW;
    }

    /** The rule that refused, or null. */
    public Rule refusingRule() {
      return decision == null || decision.allowed() || check == null ? null
          : rule(decision.rule());
    }

    /** The selected rule named {@code name}, of every kind (counted, leases, a human check's). */
    private Rule rule(String name) {
      Rule r = ruleNamed(check.rules(), name);
      if (r == null && !check.plain()) {
        r = ruleNamed(check.counted(), name);
        if (r == null) {
          r = ruleNamed(check.leases(), name);
        }
        if (r == null && check.humanCheck() != null) {
          r = ruleNamed(check.humanCheck().rules(), name);
        }
      }
      return r;
    }

    /** The store key of {@code rule} for this request's identity, as bans are logged. */
    public String keyOf(Rule rule) {
      return rule.keyFor(check.identity());
    }

    /**
     * What happened to the request, as far as the admission step decides it (see
     * {@link RequestVerdict}); meaningful once the outcome is final.
     */
    public RequestVerdict verdict() {
      switch (action) {
        case DENY -> {
          String why = denial();
          return why == null || why.equals(DENY_LIST) ? RequestVerdict.DENIED
              : why.endsWith("replayed") ? RequestVerdict.HUMAN_CHECK_REPLAYED
              : RequestVerdict.HUMAN_CHECK_FAILED;
        }
        case CHALLENGE -> {
          return "solved".equals(challenge()) ? RequestVerdict.CHALLENGE_PASSED
              : RequestVerdict.CHALLENGED;
        }
        case UNAVAILABLE -> {
          return RequestVerdict.UNAVAILABLE;
        }
        case REFUSE -> {
          Rule r = refusingRule();
          if (r != null && r.cooldown() != null && decision.banned()) {
            return RequestVerdict.LOCKED;
          }
          return r != null && r.concurrency() > 0 ? RequestVerdict.OVER_CONCURRENCY
              : RequestVerdict.REFUSED;
        }
        default -> {
          if (check == null || check.exempt() || check.allowlisted()) {
            return RequestVerdict.EXEMPT;
          }
          if (esc != null && esc.cleared) {
            return RequestVerdict.CHALLENGE_PASSED;
          }
          if (decision != null && decision.degraded() || esc != null && esc.degraded) {
            return RequestVerdict.DEGRADED;
          }
          if (decision != null && decision.shadowRefused() || esc != null && esc.shadow) {
            return RequestVerdict.SHADOW_REFUSED;
          }
          return esc != null && esc.waited ? RequestVerdict.DELAYED : RequestVerdict.ALLOWED;
        }
      }
    }

    /** Why a {@link Action#DENY} outcome denies: {@link #DENY_LIST}, or the human check's. */
    public String denial() {
      return esc == null ? null : esc.denial;
    }

    /** The human check a {@link Action#VERIFY} outcome waits for, or null. */
    public HumanCheck humanCheck() {
      return check == null ? null : check.humanCheck();
    }

    /**
     * Whether the adapter must tell {@link #responded} the response's status: the request has
     * rules counted on responses.
     */
    public boolean countsResponse() {
      return check != null && !check.counted().isEmpty();
    }

    /**
     * The response's head arrived with {@code status} (the upstream's, or the gateway's 502 or
     * 504 for it): each reservation of a rule counted on responses settles by it. Once per
     * request; later calls do nothing.
     */
    public void responded(int status) {
      settle(Math.max(1, status));
    }

    /**
     * A forwarded request's answer never came (the upstream's timeout, a connection closed
     * before answering): its reservations settle as failures, the worst case. Once per request.
     */
    public void unanswered() {
      settle(0);
    }

    /**
     * The exchange is over: the response ended, or the client went away. Concurrency leases go
     * back; a forwarded request whose answer was never told ({@link #responded}) settles its
     * reservations as failures (the app may have done the work: an attacker's hang-up must not
     * make a guess free). Idempotent.
     */
    public void ended() {
      if (action == Action.FORWARD) {
        settle(0);
      }
      release();
    }

    /**
     * The request went away, or will not go on (while delayed, waiting, in flight): what it holds
     * goes back now, as {@link #ended()} says.
     */
    public void cancel() {
      ended();
    }

    /**
     * The adapter answered an admitted request itself and never forwarded it (a body over a cap,
     * a moderation refusal): what it holds goes back and nothing is counted.
     */
    public void withheld() {
      release();
    }

    /** A phase before the rules allowed {@code d}: a shadow refusal, or a degraded decision. */
    private void phaseAllowed(Decision d) {
      if (d.shadowRefused()) {
        esc().shadow = true;
      }
      if (d.degraded()) {
        esc().degraded = true;
      }
    }

    /** A challenge's clearance let the request past its rule. */
    void cleared() {
      esc().cleared = true;
    }

    private void releaseDelay() {
      String s;
      synchronized (this) {
        s = esc == null ? null : esc.slot;
        if (s != null) {
          esc.slot = null;
        }
      }
      if (s != null) {
        admission.delays.release(s);
      }
    }

    private void release() {
      settle(-1);
      ArrayList<Object> held = null;
      synchronized (this) {
        if (esc != null) {
          held = esc.leases;
          esc.leases = null;
        }
      }
      releaseDelay();
      if (held != null) {
        for (int i = 0; i < held.size(); i += 3) {
          admission.release((Rule) held.get(i), (String) held.get(i + 1), (Long) held.get(i + 2));
        }
      }
    }

    @Override
    public String toString() {
      return "Outcome{" + action + (decision == null ? "" : ", " + decision)
          + (check == null ? "" : ", route=" + check.route()) + "}";
    }
  }

  /**
   * What one connection's admissions reuse (see {@link #admit(RequestView, String, Scratch)}):
   * the outcome, the decision it is written into, and the last check, answered again while the
   * connection's client and route stay the same. Used by one thread at a time.
   */
  public static final class Scratch {
    private final MutableDecision decision = new MutableDecision();
    private Outcome outcome;
    private Check check;
  }

  /** Builds an {@link Admission}. */
  public static final class Builder {
    private RateLimiter limiter;
    private Function<RequestView, Check> selector;
    private Policy policy;
    private ResponseSpec responses = ResponseSpec.defaults();
    private DecisionListener listener = DecisionListener.none();
    private DelayGate delays;
    private HumanVerifier verifier;
    private Challenges challenges;
    private java.time.Duration reservationTtl = DEFAULT_RESERVATION_TTL;

    private Builder() {}

    /**
     * How long a reservation of a rule counted on responses outlives an admission that never
     * settles it (its gateway crashed); longer than the longest exchange, so that no live request
     * loses its share. Default {@link #DEFAULT_RESERVATION_TTL}.
     */
    public Builder reservationTtl(java.time.Duration ttl) {
      this.reservationTtl = java.time.Duration.ofNanos(Checks.duration(ttl, "reservationTtl"));
      return this;
    }

    /**
     * Asks human checks' verifiers (the gateway's siteverify client); null (the default): a
     * route with a human check is answered as unavailable (503), never forwarded unverified.
     */
    public Builder verifier(HumanVerifier verifier) {
      this.verifier = verifier;
      return this;
    }

    public Builder limiter(RateLimiter limiter) {
      this.limiter = Checks.notNull(limiter, "limiter");
      return this;
    }

    /** Selects by {@code policy}: its routes, rules and key dimensions. */
    public Builder policy(Policy policy) {
      Checks.notNull(policy, "policy");
      this.selector = policy::select;
      this.policy = policy;
      this.challenges = policy.challenges();
      return this;
    }

    /**
     * Selects by any function (a fixed rule, a test); {@link #policy} for a policy. A rule that
     * challenges refuses instead when selected this way: challenges are the policy's.
     */
    public Builder selector(Function<RequestView, Check> selector) {
      this.selector = Checks.notNull(selector, "selector");
      this.policy = null;
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
