package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.FakeTicker;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.StatusSet;
import dev.sluice.core.Store;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.policy.Admission.Action;
import dev.sluice.core.policy.Admission.Outcome;
import dev.sluice.core.policy.PolicyTest.Req;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The escalation parts of the one admission step (issue 22): the deny list, rules counted on the
 * upstream's answers, cooldowns, concurrency leases and human checks, as timelines.
 */
class AdmissionEscalationTest {

  private final FakeTicker ticker = new FakeTicker(Long.MAX_VALUE - Duration.ofDays(1).toNanos());
  private final Store memory = Store.memory(ticker, 1000);
  private final List<String> events = new CopyOnWriteArrayList<>();

  private final DecisionListener listener = new DecisionListener() {
    @Override
    public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
      events.add(d.rule() + " " + (d.allowed() ? "allowed" : "refused"));
    }

    @Override
    public void denied(String kind) {
      events.add("denied " + kind);
    }

    @Override
    public void humanCheck(String check, String result, String detail) {
      events.add("human " + check + " " + result);
    }

    @Override
    public void responseCounted(String rule, int status, String result) {
      events.add("response " + rule + " " + status + " " + result);
    }

    @Override
    public void inFlight(String rule, int delta) {
      events.add("inFlight " + rule + " " + delta);
    }

    @Override
    public void banApplied(String kind, Decision d, String key) {
      events.add("ban " + d.rule() + " " + key + " " + d.retryAfterMillis() + "ms");
    }
  };

  private Admission admission(Policy policy, HumanVerifier verifier) {
    return Admission.builder().limiter(RateLimiter.of(memory)).policy(policy).listener(listener)
        .verifier(verifier).build();
  }

  private static Policy route(Rule... rules) {
    Policy.Builder b = Policy.builder();
    Route.Builder r = Route.builder("login").path("/login");
    for (Rule rule : rules) {
      b.rule(rule);
      r.rule(rule.name());
    }
    return b.route(r.build()).build();
  }

  private Outcome admit(Admission a) {
    return a.admit(Req.get("/login"), DecisionListener.HTTP);
  }

  @Test
  void countedRule_readsOnRequest_spendsOnMatchingResponses_refusesFromTheNextRequestOn() {
    Rule failed = Rule.builder("login").countStatus(StatusSet.of(List.of(401)))
        .limit(Limit.slidingLog("login", 3, Duration.ofMinutes(1))).build();
    Admission a = admission(route(failed), null);
    Outcome ok = admit(a);
    assertThat(ok.action()).isEqualTo(Action.FORWARD);
    ok.responded(200);                     // a right password costs nothing
    for (int i = 0; i < 3; i++) {
      Outcome o = admit(a);
      assertThat(o.action()).isEqualTo(Action.FORWARD);
      o.responded(401);
      o.responded(401);                    // once per request
    }
    Outcome fourth = admit(a);
    assertThat(fourth.action()).isEqualTo(Action.REFUSE);
    assertThat(fourth.decision().rule()).isEqualTo("login");
    assertThat(fourth.decision().retryAfterSeconds()).isEqualTo(60);
    assertThat(fourth.refusingRule().name()).isEqualTo("login");
    ticker.advance(Duration.ofMinutes(1));
    assertThat(admit(a).action()).isEqualTo(Action.FORWARD);
    assertThat(events).containsExactly("response login 200 skipped",
        "response login 401 counted", "response login 401 counted", "response login 401 counted",
        "login refused");
  }

  @Test
  void skipSuccess_countsEveryFailure_skipFailure_everySuccess() {
    assertThat(StatusSet.failures().contains(404)).isTrue();
    assertThat(StatusSet.failures().contains(503)).isTrue();
    assertThat(StatusSet.failures().contains(302)).isFalse();
    assertThat(StatusSet.failures().skipped()).isEqualTo("success");
    assertThat(StatusSet.successes().contains(204)).isTrue();
    assertThat(StatusSet.successes().contains(400)).isFalse();
    assertThat(StatusSet.of(List.of(401, 403)).statuses()).containsExactly(401, 403);
    assertThatThrownBy(() -> StatusSet.of(List.of(99))).hasMessageContaining("100..599");
  }

  /** Seed 003's invites: 2 wrong codes lock for 1 m, then 2 m, 4 m, capped at 4 m; right resets. */
  @Test
  void cooldown_escalatesTwicePerLock_toTheMaximum_andASuccessResets() {
    Rule invites = Rule.builder("invites").countStatus(StatusSet.of(List.of(404)))
        .cooldown(2, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofMinutes(4))
        .successResets(true).build();
    Admission a = admission(route(invites), null);
    long[] expected = {60, 120, 240, 240};
    for (long lock : expected) {
      admit(a).responded(404);
      Outcome second = admit(a);
      assertThat(second.forward()).isTrue();
      second.responded(404);
      Outcome locked = admit(a);
      assertThat(locked.action()).isEqualTo(Action.REFUSE);
      assertThat(locked.verdict()).isEqualTo(RequestVerdict.LOCKED);
      assertThat(locked.decision().retryAfterSeconds()).isEqualTo(lock);
      ticker.advance(Duration.ofSeconds(lock));
    }
    Outcome right = admit(a);
    assertThat(right.forward()).isTrue();
    right.responded(200);
    admit(a).responded(404);
    admit(a).responded(404);
    assertThat(admit(a).decision().retryAfterSeconds()).isEqualTo(60);   // back to the first lock
    assertThat(events).contains("response invites 200 reset",
        "ban invites 192.0.2.1 60000ms", "ban invites 192.0.2.1 240000ms");
  }

  /**
   * Attack 1 of issue 30: 30 wrong passwords sent at once against 3 per 15 minutes. Each request
   * in flight holds a share, so 3 go on and 27 are refused in flight (no ban, retry in 1 s); the
   * 3 answers are 401s, and the next request is refused by the spent limit, starting the ban.
   */
  @Test
  void countedRule_thirtyInParallel_onlyTheAllowanceLeftGoesOn() {
    Rule failed = Rule.builder("login").countStatus(StatusSet.of(List.of(401)))
        .limit(Limit.slidingWindow("login", 3, Duration.ofMinutes(15)))
        .ban(Duration.ofMinutes(15)).build();
    Admission a = admission(route(failed), null);
    List<Outcome> sent = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      sent.add(admit(a));
    }
    List<Outcome> forwarded = sent.stream().filter(Outcome::forward).toList();
    assertThat(forwarded).hasSize(3);
    Outcome inFlight = sent.get(3);
    assertThat(inFlight.action()).isEqualTo(Action.REFUSE);
    assertThat(inFlight.verdict()).isEqualTo(RequestVerdict.REFUSED);
    assertThat(inFlight.decision().retryAfterSeconds()).isEqualTo(1);
    assertThat(inFlight.decision().banned()).isFalse();
    forwarded.forEach(o -> o.responded(401));
    Outcome next = admit(a);
    assertThat(next.action()).isEqualTo(Action.REFUSE);
    assertThat(next.decision().banned()).isTrue();
    assertThat(next.decision().retryAfterSeconds()).isEqualTo(15 * 60);
    assertThat(events).contains("ban login 192.0.2.1 900000ms");
  }

  /** A success or an uncounted status gives its share back; the limit is as if never asked. */
  @Test
  void countedRule_aSuccessGivesItsShareBack() {
    Rule failed = Rule.builder("login").countStatus(StatusSet.of(List.of(401)))
        .limit(Limit.slidingLog("login", 2, Duration.ofMinutes(1))).build();
    Admission a = admission(route(failed), null);
    Outcome first = admit(a);
    Outcome second = admit(a);
    assertThat(admit(a).action()).isEqualTo(Action.REFUSE);   // both in flight
    first.responded(200);
    second.responded(500);
    first.ended();
    second.ended();
    Outcome third = admit(a);
    Outcome fourth = admit(a);
    assertThat(third.forward()).isTrue();
    assertThat(fourth.forward()).isTrue();
  }

  /**
   * Attack 2 of issue 30: a client that hangs up after sending, before the answer, must not get
   * a free guess: a forwarded request that ends without an answer counts as a failure.
   */
  @Test
  void cooldown_aForwardedRequestEndedWithoutAnAnswer_countsAsAFailure() {
    Rule invites = Rule.builder("invites").countStatus(StatusSet.of(List.of(404)))
        .cooldown(3, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofMinutes(4)).build();
    Admission a = admission(route(invites), null);
    for (int i = 0; i < 3; i++) {
      Outcome o = admit(a);
      assertThat(o.forward()).isTrue();
      o.cancel();   // the client went away; the adapter never learned the answer
    }
    Outcome locked = admit(a);
    assertThat(locked.action()).isEqualTo(Action.REFUSE);
    assertThat(locked.decision().retryAfterSeconds()).isEqualTo(60);
    assertThat(events).contains("response invites 0 unanswered");
  }

  /** A request refused by a later phase, or answered by its adapter, holds and counts nothing. */
  @Test
  void reservation_givenBack_whenTheRequestIsNotForwarded() {
    Rule invites = Rule.builder("invites").countStatus(StatusSet.of(List.of(404)))
        .cooldown(1, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofMinutes(4)).build();
    Rule api = Rule.builder("api").limit(Limit.tokenBucket("api", 1, 1, Duration.ofHours(1)))
        .build();
    Admission a = admission(route(invites, api), null);
    Outcome first = admit(a);
    assertThat(first.forward()).isTrue();
    first.withheld();                                  // a body cap or moderation answered it
    first.ended();
    Outcome refusedByApi = admit(a);
    assertThat(refusedByApi.action()).isEqualTo(Action.REFUSE);
    assertThat(refusedByApi.decision().rule()).isEqualTo("api");
    refusedByApi.ended();
    ticker.advance(Duration.ofHours(1));
    Outcome again = admit(a);
    assertThat(again.forward()).isTrue();              // nothing was counted against invites
  }

  /**
   * Attack 3 of issue 30: an address-wide cooldown is not reset by a success from that address
   * (an attacker's own valid code would launder everyone's failures); a member's key is.
   */
  @Test
  void addressCooldown_ownSuccess_doesNotLaunderFailures() {
    Rule perAddress = Rule.builder("invites:ip").countStatus(StatusSet.of(List.of(404)))
        .cooldown(4, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofMinutes(4)).build();
    Admission a = admission(route(perAddress), null);
    int wrongForwarded = 0;
    for (int round = 0; round < 10; round++) {
      for (int status : new int[] {404, 404, 200}) {
        Outcome o = admit(a);
        if (!o.forward()) {
          continue;
        }
        if (status == 404) {
          wrongForwarded++;
        }
        o.responded(status);
        o.ended();
      }
    }
    assertThat(wrongForwarded).isEqualTo(4);
    assertThat(events).contains("response invites:ip 200 skipped");
    assertThat(perAddress.resetsOnSuccess(Identity.ip("192.0.2.1"))).isFalse();
    Rule perMember = perAddress.toBuilder().key("user:ip").build();
    assertThat(perMember.resetsOnSuccess(Identity.ip("192.0.2.1").with("user", "alice")))
        .isTrue();
    assertThat(perMember.resetsOnSuccess(Identity.ip("192.0.2.1"))).isFalse();   // shared bucket
  }

  @Test
  void concurrency_holdsALeasePerRequestInFlight_refusesPastTheCap_andGivesBackOnEnd() {
    Rule conn = Rule.builder("conn").concurrency(2, Duration.ofMinutes(1)).build();
    Rule api = Rule.builder("api").limit(Limit.tokenBucket("api", 3, 1, Duration.ofHours(1)))
        .build();
    Admission a = admission(route(conn, api), null);
    Outcome first = admit(a);
    Outcome second = admit(a);
    assertThat(first.forward()).isTrue();
    assertThat(second.forward()).isTrue();
    assertThat(memory.leases("conn:192.0.2.1")).isEqualTo(2);
    Outcome third = admit(a);
    assertThat(third.action()).isEqualTo(Action.REFUSE);
    assertThat(third.verdict()).isEqualTo(RequestVerdict.OVER_CONCURRENCY);
    assertThat(first.verdict()).isEqualTo(RequestVerdict.ALLOWED);
    assertThat(third.decision().rule()).isEqualTo("conn");
    assertThat(third.decision().limit()).isEqualTo(2);
    first.ended();
    first.ended();
    assertThat(memory.leases("conn:192.0.2.1")).isEqualTo(1);
    Outcome fourth = admit(a);                      // the api bucket's third and last token
    assertThat(fourth.forward()).isTrue();
    fourth.cancel();                                // the client went away
    Outcome fifth = admit(a);                       // refused by api: its lease goes back
    assertThat(fifth.action()).isEqualTo(Action.REFUSE);
    assertThat(fifth.verdict()).isEqualTo(RequestVerdict.REFUSED);
    assertThat(fifth.decision().rule()).isEqualTo("api");
    assertThat(memory.leases("conn:192.0.2.1")).isEqualTo(1);
    second.ended();
    assertThat(memory.leases("conn:192.0.2.1")).isZero();
    assertThat(events.stream().filter(e -> e.startsWith("inFlight")).toList())
        .containsExactly("inFlight conn 1", "inFlight conn 1", "inFlight conn -1",
            "inFlight conn 1", "inFlight conn -1", "inFlight conn 1", "inFlight conn -1",
            "inFlight conn -1");
  }

  @Test
  void shadowConcurrency_neverRefuses() {
    Rule conn = Rule.builder("conn").concurrency(1, Duration.ofMinutes(1)).mode(Mode.SHADOW)
        .build();
    Admission a = admission(route(conn), null);
    assertThat(admit(a).forward()).isTrue();
    Outcome over = admit(a);
    assertThat(over.forward()).isTrue();
    assertThat(over.verdict()).isEqualTo(RequestVerdict.SHADOW_REFUSED);
    assertThat(events).contains("conn allowed");
  }

  @Test
  void denyList_isDenied_beforeAnyRule_andBeforeTheAllowList() {
    Rule api = Rule.builder("api").limit(Limit.tokenBucket("api", 1, 1, Duration.ofHours(1)))
        .build();
    Policy p = Policy.builder().rule(api).deny(List.of("192.0.2.0/24"))
        .allow(List.of("192.0.2.1/32"))
        .route(Route.builder("login").path("/login").rule("api").build()).build();
    Admission a = admission(p, null);
    Outcome o = admit(a);
    assertThat(o.action()).isEqualTo(Action.DENY);
    assertThat(o.denial()).isEqualTo(Admission.DENY_LIST);
    assertThat(o.verdict()).isEqualTo(RequestVerdict.DENIED);
    assertThat(o.forward()).isFalse();
    assertThat(a.admit(Req.get("/login").from("198.51.100.1"), DecisionListener.HTTP).forward())
        .isTrue();
    assertThat(events).containsExactly("denied http", "api allowed");
  }

  @Test
  void ruleStatus_perRuleAndGlobal() {
    ResponseSpec spec = ResponseSpec.newBuilder().refusalStatus(503).ruleStatus("login", 403)
        .build();
    Rule login = Rule.builder("login").limit(Limit.tokenBucket("x", 1, 1, Duration.ofHours(1)))
        .build();
    Rule other = Rule.builder("other").limit(Limit.tokenBucket("x", 1, 1, Duration.ofHours(1)))
        .build();
    RateLimiter limiter = RateLimiter.of(memory);
    limiter.check(login, Identity.ip("192.0.2.9"));
    limiter.check(other, Identity.ip("192.0.2.9"));
    assertThat(spec.status(limiter.check(login, Identity.ip("192.0.2.9")))).isEqualTo(403);
    assertThat(spec.status(limiter.check(other, Identity.ip("192.0.2.9")))).isEqualTo(503);
    assertThat(ResponseSpec.defaults().status(limiter.check(other, Identity.ip("192.0.2.9"))))
        .isEqualTo(429);
    assertThatThrownBy(() -> ResponseSpec.newBuilder().refusalStatus(200))
        .hasMessageContaining("400..599");
  }

  /** A verifier in this JVM: answers what the test says, counts the calls. */
  private static final class Verifier implements HumanVerifier {
    final List<String> tokens = new ArrayList<>();
    HumanCheck.Verification answer = HumanCheck.Verification.passed();
    CompletableFuture<HumanCheck.Verification> pending;

    @Override
    public CompletableFuture<HumanCheck.Verification> verify(HumanCheck check, String token,
        String remoteIp) {
      tokens.add(token + "@" + remoteIp);
      return pending != null ? pending : CompletableFuture.completedFuture(answer);
    }
  }

  private static Policy humanRoute(HumanCheck check) {
    return Policy.builder().humanCheck(check)
        .route(Route.builder("signin").path("/login").humanCheck(check.name()).build()).build();
  }

  private static HumanCheck.Builder turnstile() {
    return HumanCheck.builder("turnstile", HumanCheck.Provider.TURNSTILE).secret("s3cret");
  }

  private Outcome verify(Admission a, String token) {
    Outcome o = admit(a);
    assertThat(o.action()).isEqualTo(Action.VERIFY);
    Outcome v = a.verify(o, token);
    return v.pending() ? v.stage().toCompletableFuture().join() : v;
  }

  @Test
  void humanCheck_passesOnce_refusesTheSameTokenAgain_withoutAskingTheVerifier() {
    Verifier verifier = new Verifier();
    Admission a = admission(humanRoute(turnstile().build()), verifier);
    assertThat(verify(a, "tok-1").action()).isEqualTo(Action.FORWARD);
    Outcome replay = verify(a, "tok-1");
    assertThat(replay.action()).isEqualTo(Action.DENY);
    assertThat(replay.denial()).isEqualTo("human check replayed");
    assertThat(replay.verdict()).isEqualTo(RequestVerdict.HUMAN_CHECK_REPLAYED);
    assertThat(verifier.tokens).containsExactly("tok-1@192.0.2.1");
    Outcome none = verify(a, null);
    assertThat(none.action()).isEqualTo(Action.DENY);
    assertThat(none.verdict()).isEqualTo(RequestVerdict.HUMAN_CHECK_FAILED);
    assertThat(none.denial()).isEqualTo("human check required");
    verifier.answer = HumanCheck.Verification.failed("hostname");
    assertThat(verify(a, "tok-2").action()).isEqualTo(Action.DENY);
    ticker.advance(Duration.ofSeconds(300));                // remembered for maxAge, no longer
    verifier.answer = HumanCheck.Verification.passed();
    assertThat(verify(a, "tok-1").action()).isEqualTo(Action.FORWARD);
    assertThat(events.stream().filter(e -> e.startsWith("human ")).toList()).containsExactly(
        "human turnstile passed", "human turnstile replayed", "human turnstile missing",
        "human turnstile failed", "human turnstile passed");
  }

  @Test
  void humanCheck_ownLimit_refusesVerificationsPastIt() {
    Admission a = admission(humanRoute(turnstile()
        .limit(Limit.fixedWindow("verify", 2, Duration.ofMinutes(1))).build()), new Verifier());
    verify(a, "a");
    verify(a, "b");
    Outcome third = verify(a, "c");
    assertThat(third.action()).isEqualTo(Action.REFUSE);
    assertThat(third.decision().rule()).isEqualTo("humanCheck:turnstile");
  }

  @Test
  void humanCheck_verifierLate_decidedByOnError() {
    Verifier silent = new Verifier();
    silent.pending = new CompletableFuture<>();             // never answers
    Admission open = admission(humanRoute(turnstile().deadline(Duration.ofMillis(1)).build()),
        silent);
    assertThat(verify(open, "x").action()).isEqualTo(Action.FORWARD);
    Admission closed = admission(humanRoute(turnstile().deadline(Duration.ofMillis(1))
        .onError(OnStoreError.DENY).build()), silent);
    Outcome o = verify(closed, "y");
    assertThat(o.action()).isEqualTo(Action.UNAVAILABLE);
    assertThat(o.decision().degraded()).isTrue();
    assertThat(events).contains("human turnstile error");
  }

  @Test
  void humanCheck_withoutAVerifier_isNeverForwarded() {
    Admission a = admission(humanRoute(turnstile().build()), null);
    Outcome o = admit(a);
    assertThat(o.action()).isEqualTo(Action.UNAVAILABLE);
    assertThat(ResponseSpec.defaults().status(o.decision())).isEqualTo(503);
  }

  @Test
  void humanCheck_tokens_fromFormAndJson_oneValueOnly() {
    HumanCheck form = turnstile().build();
    assertThat(form.token("a=1&cf-turnstile-response=XY%2Bz&b=2")).isEqualTo("XY+z");
    assertThat(form.token("cf-turnstile-response=1&cf-turnstile-response=2")).isNull();
    assertThat(form.token("other=1")).isNull();
    assertThat(form.token("cf-turnstile-response=")).isNull();
    HumanCheck json = turnstile().token(HumanCheck.TokenFrom.JSON, "token").build();
    assertThat(json.token("{\"user\":\"a\",\"nested\":{\"token\":\"no\"},\"token\":\"t\\u0041\"}"))
        .isEqualTo("tA");
    assertThat(json.token("{\"token\":\"a\",\"token\":\"b\"}")).isNull();
    assertThat(json.token("{\"token\":1}")).isNull();
    assertThat(json.token("[\"token\"]")).isNull();
    HumanCheck header = turnstile().token(HumanCheck.TokenFrom.HEADER, "X-Turnstile").build();
    assertThat(header.token(Req.get("/").header("x-turnstile", " abc "))).isEqualTo("abc");
    assertThat(header.token(Req.get("/"))).isNull();
  }

  @Test
  void judge_checksSuccessHostnameActionAgeAndScore() {
    HumanCheck h = turnstile().hostname("example.com").action("login").build();
    java.time.Instant now = java.time.Instant.parse("2026-01-01T12:00:00Z");
    assertThat(h.judge(true, "example.com", "login", now.minusSeconds(10), Double.NaN, null, now)
        .result()).isEqualTo(HumanCheck.Result.PASSED);
    assertThat(h.judge(false, "example.com", "login", now, Double.NaN,
        List.of("invalid-input-response"), now).reason()).isEqualTo("invalid-input-response");
    assertThat(h.judge(true, "evil.com", "login", now, Double.NaN, null, now).reason())
        .isEqualTo("hostname");
    assertThat(h.judge(true, "example.com", "signup", now, Double.NaN, null, now).reason())
        .isEqualTo("action");
    assertThat(h.judge(true, "example.com", "login", now.minusSeconds(301), Double.NaN, null, now)
        .reason()).isEqualTo("stale");
    HumanCheck v3 = HumanCheck.builder("recaptcha", HumanCheck.Provider.RECAPTCHA).secret("k")
        .minScore(0.5).build();
    assertThat(v3.judge(true, null, null, now, 0.3, null, now).reason()).isEqualTo("score");
    assertThat(v3.toString()).doesNotContain("\"k\"").doesNotContain("secret");
  }

  @Test
  void rulesCountedOnResponses_areRefusedByMethodLevelChecks() {
    Rule invites = Rule.builder("invites").countStatus(StatusSet.failures())
        .cooldown(8, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofHours(1)).build();
    assertThatThrownBy(() -> Check.of(List.of(invites), Identity.empty(), 1))
        .hasMessageContaining("only routes apply");
    assertThatThrownBy(() -> Rule.builder("x").concurrency(3, Duration.ofMinutes(1))
        .limit(Limit.fixedWindow("x", 1, Duration.ofSeconds(1))).build())
        .hasMessageContaining("no other limit beside a concurrency cap");
    assertThatThrownBy(() -> Rule.builder("x").cooldown(3, Duration.ofMinutes(1),
        Duration.ofMinutes(1), Duration.ofMinutes(2)).build())
        .hasMessageContaining("countStatus");
  }
}
