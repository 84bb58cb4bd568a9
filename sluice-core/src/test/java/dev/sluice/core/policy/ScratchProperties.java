package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.FakeTicker;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.policy.Admission.Outcome;
import dev.sluice.core.policy.Admission.Scratch;
import dev.sluice.core.policy.PolicyTest.Req;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * An admission with a {@link Scratch} decides exactly as one without: reusing the last check,
 * identity, outcome and decision of a connection never carries one request's client, route or
 * numbers into the next.
 */
class ScratchProperties {

  private static final String[] PEERS = {"192.0.2.1", "192.0.2.2", "2001:db8::7", "10.1.2.3"};
  private static final String[] PATHS = {"/api/a", "/api/b", "/user/x", "/healthz", "/"};
  private static final String[] USERS = {null, "ann", "bob"};

  private static Policy policy() {
    Rule api = Rule.builder("api").key("ip")
        .limit(Limit.tokenBucket("api", 3, 1, Duration.ofSeconds(1))).build();
    Rule user = Rule.builder("user").key("user:ip")
        .limit(Limit.fixedWindow("user", 2, Duration.ofSeconds(2))).build();
    Rule all = Rule.builder("all").key("ip")
        .limit(Limit.slidingWindow("all", 6, Duration.ofSeconds(3))).build();
    return Policy.builder().rule(api).rule(user).rule(all).global("all")
        .allow(List.of("10.0.0.0/8"))
        .dimension("user", Source.header("x-user"))
        .route(Route.builder("health").path("/healthz").exempt(true).build())
        .route(Route.builder("api").path("/api/**").rule("api").build())
        .route(Route.builder("user").path("/user/**").rule("user").build())
        .build();
  }

  /** Each step: a peer, a path, a user header (or none), and milliseconds to move the clock. */
  @Property(tries = 300)
  void scratchAdmission_decidesAsAFreshOne(
      @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 3) Integer> peers,
      @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 4) Integer> paths,
      @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 2) Integer> users,
      @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 900) Integer> steps) {
    FakeTicker ticker = new FakeTicker();
    Policy policy = policy();
    List<String> fresh = new ArrayList<>();
    List<String> reused = new ArrayList<>();
    Admission a = admission(policy, ticker, fresh);
    Admission b = admission(policy, ticker, reused);
    Scratch scratch = new Scratch();
    int n = Math.min(Math.min(peers.size(), paths.size()), Math.min(users.size(), steps.size()));
    for (int i = 0; i < n; i++) {
      ticker.advance(Duration.ofMillis(steps.get(i)));
      Req req = Req.get(PATHS[paths.get(i)]).from(PEERS[peers.get(i)]);
      if (USERS[users.get(i)] != null) {
        req = req.header("x-user", USERS[users.get(i)]);
      }
      Outcome x = a.admit(req, DecisionListener.HTTP);
      Outcome y = b.admit(req, DecisionListener.HTTP, scratch);
      assertThat(describe(y)).as("step %d: %s", i, req).isEqualTo(describe(x));
      y.ended();
    }
    assertThat(reused).isEqualTo(fresh);
  }

  @Test
  void aKeptConnection_reusesItsOutcomeAndCheck_untilItsClientChanges() {
    Admission b = admission(policy(), new FakeTicker(), new ArrayList<>());
    Scratch scratch = new Scratch();
    Req first = Req.get("/api/a");
    Outcome o1 = b.admit(first, DecisionListener.HTTP, scratch);
    Check c1 = o1.check();
    Outcome o2 = b.admit(first, DecisionListener.HTTP, scratch);
    assertThat(o2).isSameAs(o1);
    assertThat(o2.check()).isSameAs(c1);
    assertThat(o2.decision().remaining()).isEqualTo(1);

    Outcome o3 = b.admit(first.from("192.0.2.9"), DecisionListener.HTTP, scratch);
    assertThat(o3).isSameAs(o1);
    assertThat(o3.check()).isNotSameAs(c1);
    assertThat(o3.check().identity().get("ip")).isEqualTo("192.0.2.9");
    assertThat(o3.decision().remaining()).isEqualTo(2);
  }

  private static Admission admission(Policy policy, FakeTicker ticker, List<String> events) {
    DecisionListener listener = new DecisionListener() {
      @Override
      public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
        events.add(rules.size() + " " + d);
      }

      @Override
      public void allowlisted(String kind) {
        events.add("allowlisted");
      }
    };
    return Admission.builder().limiter(RateLimiter.of(Store.memory(ticker, 1000))).policy(policy)
        .listener(listener).build();
  }

  private static String describe(Outcome o) {
    Check c = o.check();
    return o.action() + " " + o.decision() + " route=" + o.route() + " limitHeaders="
        + o.limitHeaders() + (c == null ? "" : " " + c.identity() + " rules=" + c.rules()
        + " cost=" + c.cost());
  }
}
