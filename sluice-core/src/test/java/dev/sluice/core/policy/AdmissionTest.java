package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.FakeTicker;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.policy.Admission.Action;
import dev.sluice.core.policy.Admission.Outcome;
import dev.sluice.core.policy.PolicyTest.Req;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one admission step: select, decide, delay, outcome; reported once per final decision. */
class AdmissionTest {

  private final FakeTicker ticker = new FakeTicker();
  private final Store memory = Store.memory(ticker, 1000);
  private final List<String> events = new ArrayList<>();

  private final DecisionListener listener = new DecisionListener() {
    @Override
    public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
      events.add(kind + " " + d.rule() + " " + (d.allowed() ? "allowed" : "refused"));
    }

    @Override
    public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
      events.add("failed " + error.getMessage());
    }

    @Override
    public void banApplied(String kind, Decision d, String key) {
      events.add("ban " + key);
    }

    @Override
    public void allowlisted(String kind) {
      events.add("allowlisted");
    }

    @Override
    public void delayed(String kind, String rule) {
      events.add("delayed " + rule);
    }
  };

  private static Rule bucket(String name, int burst, Duration refillEvery) {
    return Rule.builder(name).key("ip")
        .limit(Limit.tokenBucket(name, burst, 1, refillEvery)).build();
  }

  private Admission admission(Store store, Policy policy, DelayGate gate) {
    return Admission.builder().limiter(RateLimiter.of(store)).policy(policy).listener(listener)
        .delays(gate).build();
  }

  private static Policy policy(Rule... rules) {
    Policy.Builder b = Policy.builder().allow(List.of("10.0.0.0/8"));
    Route.Builder api = Route.builder("api").path("/api/**");
    for (Rule r : rules) {
      b.rule(r);
      api.rule(r.name());
    }
    return b.route(Route.builder("health").path("/healthz").exempt(true).build())
        .route(api.build()).build();
  }

  @Test
  void allowedThenRefused_reportedOnce_eachWithItsAction() {
    Admission a = admission(memory, policy(bucket("api", 1, Duration.ofSeconds(2))),
        DelayGate.create(10));
    Outcome first = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(first.action()).isEqualTo(Action.FORWARD);
    assertThat(first.limitHeaders()).isTrue();
    assertThat(first.route()).isEqualTo("api");
    Outcome second = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(second.action()).isEqualTo(Action.REFUSE);
    assertThat(second.decision().retryAfterSeconds()).isEqualTo(2);
    assertThat(second.refusingRule().name()).isEqualTo("api");
    assertThat(events).containsExactly("http api allowed", "http api refused");
  }

  @Test
  void exemptAllowlistedAndPreflight_passUnchecked() {
    Admission a = admission(memory, policy(bucket("api", 1, Duration.ofSeconds(2))),
        DelayGate.create(10));
    assertThat(a.admit(Req.get("/healthz"), DecisionListener.HTTP).forward()).isTrue();
    Outcome allow = a.admit(Req.get("/api/x").from("10.1.2.3"), DecisionListener.HTTP);
    assertThat(allow.forward()).isTrue();
    assertThat(allow.decision()).isNull();
    Req preflight = new Req("OPTIONS", "/api/x", "192.0.2.1", java.util.Map.of(), false)
        .header("Access-Control-Request-Method", "POST");
    assertThat(a.admit(preflight, DecisionListener.HTTP).forward()).isTrue();
    assertThat(a.admit(preflight, DecisionListener.HTTP).forward()).isTrue();
    assertThat(events).containsExactly("allowlisted");
  }

  @Test
  void shadowRule_forwardsWithoutLimitHeaders() {
    Rule shadow = bucket("api", 1, Duration.ofSeconds(2)).toBuilder().mode(Mode.SHADOW).build();
    Admission a = admission(memory, policy(shadow), DelayGate.create(10));
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(o.forward()).isTrue();
    assertThat(o.decision().shadowRefused()).isTrue();
    assertThat(o.limitHeaders()).isFalse();
  }

  @Test
  void delayedRefusal_waitsItsRetryAfter_thenIsDecidedAgain_andGivesItsSlotBack() {
    Rule delayed = bucket("api", 1, Duration.ofMillis(100)).toBuilder()
        .delay(Duration.ofMillis(500)).delayQueue(1).build();
    DelayGate gate = DelayGate.create(10);
    Admission a = admission(memory, policy(delayed), gate);
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(o.action()).isEqualTo(Action.DELAY);
    assertThat(o.delayNanos()).isEqualTo(Duration.ofMillis(100).toNanos());
    assertThat(gate.waiting()).isEqualTo(1);
    // A second request of the same key finds the key's only slot taken: refused at once.
    assertThat(a.admit(Req.get("/api/x"), DecisionListener.HTTP).action())
        .isEqualTo(Action.REFUSE);
    ticker.advance(Duration.ofMillis(100));
    Outcome after = a.redecide(o);
    assertThat(after.action()).isEqualTo(Action.FORWARD);
    assertThat(gate.waiting()).isZero();
    assertThat(gate.keys()).isZero();
    assertThat(events).containsExactly("http api allowed", "delayed api", "http api refused",
        "http api allowed");
  }

  @Test
  void delayBudget_spentByWaits_thenRefused() {
    Rule delayed = bucket("api", 1, Duration.ofMillis(300)).toBuilder()
        .delay(Duration.ofMillis(500)).delayQueue(2).build();
    DelayGate gate = DelayGate.create(10);
    Admission a = admission(memory, policy(delayed), gate);
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(o.delayNanos()).isEqualTo(Duration.ofMillis(300).toNanos());
    ticker.advance(Duration.ofMillis(300));
    // Someone else takes the token first: the wait of 300 ms does not fit the 200 ms left.
    assertThat(a.admit(Req.get("/api/x"), DecisionListener.HTTP).forward()).isTrue();
    Outcome again = a.redecide(o);
    assertThat(again.action()).isEqualTo(Action.REFUSE);
    assertThat(gate.waiting()).isZero();
  }

  @Test
  void cancelledDelay_givesItsSlotBack() {
    Rule delayed = bucket("api", 1, Duration.ofMillis(100)).toBuilder()
        .delay(Duration.ofMillis(500)).build();
    DelayGate gate = DelayGate.create(10);
    Admission a = admission(memory, policy(delayed), gate);
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(gate.waiting()).isEqualTo(1);
    o.cancel();
    o.cancel();
    assertThat(gate.waiting()).isZero();
  }

  @Test
  void failingStore_failClosedRule_isUnavailable_degraded() {
    Rule closed = bucket("api", 1, Duration.ofSeconds(1)).toBuilder()
        .onStoreError(dev.sluice.core.OnStoreError.DENY).build();
    Store broken = TestStore.throwing(memory, new IllegalStateException("boom"));
    Admission a = admission(broken, policy(closed), DelayGate.create(10));
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(o.action()).isEqualTo(Action.UNAVAILABLE);
    assertThat(o.decision().degraded()).isTrue();
    assertThat(events).containsExactly("http api refused");
  }

  @Test
  void throwingSelector_isReported_andTheRequestForwarded() {
    Admission a = Admission.builder().limiter(RateLimiter.of(memory)).listener(listener)
        .selector(r -> {
          throw new IllegalStateException("a broken selector");
        }).build();
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(o.forward()).isTrue();
    assertThat(o.decision()).isNull();
    assertThat(events).containsExactly("failed a broken selector");
  }

  @Test
  void remoteStore_isPending_andCompletesWithTheOutcome_reportedThen() {
    TestStore remote = TestStore.remote(memory);
    Admission a = admission(remote, policy(bucket("api", 1, Duration.ofSeconds(2))),
        DelayGate.create(10));
    Outcome o = a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(o.pending()).isTrue();
    assertThat(events).isEmpty();
    remote.replies.poll().run();
    Outcome done = o.stage().toCompletableFuture().join();
    assertThat(done.action()).isEqualTo(Action.FORWARD);
    assertThat(events).containsExactly("http api allowed");
  }

  @Test
  void banAppliedOnce_reportedWithTheKey() {
    Rule banned = bucket("api", 1, Duration.ofSeconds(2)).toBuilder()
        .ban(Duration.ofMinutes(1)).build();
    Admission a = admission(memory, policy(banned), DelayGate.create(10));
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    a.admit(Req.get("/api/x"), DecisionListener.HTTP);
    assertThat(events).containsExactly("http api allowed", "http api refused", "ban 192.0.2.1",
        "http api refused");
  }
}
