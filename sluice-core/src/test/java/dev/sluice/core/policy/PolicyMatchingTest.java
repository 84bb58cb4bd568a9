package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.FakeTicker;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.PolicyTest.Req;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Routes by host, header and client network; the allow list; the dry-run switch. */
class PolicyMatchingTest {

  private final RateLimiter limiter = RateLimiter.of(Store.memory(new FakeTicker(), 1000));

  private static Rule one(String name) {
    return Rule.builder(name).limit(Limit.fixedWindow(name, 1, Duration.ofMinutes(1))).build();
  }

  private static Policy.Builder base() {
    return Policy.builder().rule(one("api")).rule(one("internal")).rule(one("v2"))
        .rule(one("backstop"));
  }

  @Test
  void host_matchesIgnoringPortAndCase_wildcardForSubdomains() {
    Policy p = base()
        .route(Route.builder("api").host("api.example.com").rule("api").build())
        .route(Route.builder("tenants").host("*.example.com").rule("v2").build())
        .build();
    assertThat(p.select(Req.get("/x").header("Host", "API.example.com:8080")).route())
        .isEqualTo("api");
    assertThat(p.select(Req.get("/x").header("Host", "api.example.com.")).route())
        .isEqualTo("api");
    assertThat(p.select(Req.get("/x").header("Host", "a.example.com")).route())
        .isEqualTo("tenants");
    assertThat(p.select(Req.get("/x").header("Host", "example.com")).route()).isNull();
    assertThat(p.select(Req.get("/x").header("Host", "badexample.com")).route()).isNull();
    assertThat(p.select(Req.get("/x")).route()).isNull();
  }

  @Test
  void header_exactValueOrAnyValue_allMustHold() {
    Policy p = base()
        .route(Route.builder("v2").header("X-Api-Version", "2").header("Authorization", "*")
            .rule("v2").build())
        .build();
    Req r = Req.get("/x").header("x-api-version", "2");
    assertThat(p.select(r).route()).isNull();
    assertThat(p.select(r.header("Authorization", "Bearer t")).route()).isEqualTo("v2");
    assertThat(p.select(Req.get("/x").header("X-Api-Version", "3")
        .header("Authorization", "Bearer t")).route()).isNull();
  }

  @Test
  void from_matchesTheResolvedClient_afterTrustedProxies() {
    Policy p = base()
        .route(Route.builder("internal").from(List.of("10.0.0.0/8")).rule("internal").build())
        .route(Route.builder("rest").rule("api").build())
        .clientAddress(ClientAddressResolver.builder().trustedProxies(List.of("192.0.2.0/24"))
            .build())
        .build();
    assertThat(p.select(Req.get("/x").from("10.1.1.1")).route()).isEqualTo("internal");
    assertThat(p.select(Req.get("/x").from("192.0.2.1")).route()).isEqualTo("rest");
    assertThat(p.select(Req.get("/x").from("192.0.2.1").header("X-Forwarded-For", "10.2.2.2"))
        .route()).isEqualTo("internal");
    // From an untrusted peer the header is ignored: the peer is the client.
    assertThat(p.select(Req.get("/x").from("203.0.113.9").header("X-Forwarded-For", "10.2.2.2"))
        .route()).isEqualTo("rest");
  }

  @Test
  void allowListedClient_skipsEveryRule_othersAreLimited() {
    Policy p = base().global("backstop").allow(List.of("10.0.0.0/8", "::1")).build();
    Req inside = Req.get("/x").from("10.9.8.7");
    for (int i = 0; i < 5; i++) {
      Check c = p.select(inside);
      assertThat(c.exempt()).isTrue();
      assertThat(c.allowlisted()).isTrue();
      assertThat(c.apply(limiter).allowed()).isTrue();
    }
    assertThat(p.select(Req.get("/x").from("::1")).allowlisted()).isTrue();
    Req outside = Req.get("/x").from("192.0.2.1");
    assertThat(p.select(outside).apply(limiter).allowed()).isTrue();
    assertThat(p.select(outside).apply(limiter).allowed()).isFalse();
    assertThat(p.select(outside).allowlisted()).isFalse();
  }

  @Test
  void exemptRoute_isNotAllowlisted() {
    Policy p = base().route(Route.builder("health").path("/healthz").exempt(true).build()).build();
    Check c = p.select(Req.get("/healthz"));
    assertThat(c.exempt()).isTrue();
    assertThat(c.allowlisted()).isFalse();
  }

  @Test
  void dryRun_turnsEnforcingRulesIntoShadow_offStaysOff() {
    Rule off = Rule.builder("off").limit(Limit.fixedWindow("off", 1, Duration.ofMinutes(1)))
        .mode(Mode.OFF).build();
    Policy p = base().rule(off).global("backstop").dryRun(true).build();
    assertThat(p.dryRun()).isTrue();
    assertThat(p.rules().get("api").mode()).isEqualTo(Mode.SHADOW);
    assertThat(p.rules().get("off").mode()).isEqualTo(Mode.OFF);
    assertThat(p.global().get(0).mode()).isEqualTo(Mode.SHADOW);
    Req r = Req.get("/x");
    for (int i = 0; i < 3; i++) {
      assertThat(p.select(r).apply(limiter).allowed()).isTrue();
    }
    assertThat(p.select(r).apply(limiter).shadowRefused()).isTrue();
  }

  @Test
  void withDryRun_keepsRoutesAllowAndResolver() {
    ClientAddressResolver resolver = ClientAddressResolver.builder().trustedHops(1).build();
    Policy p = base().route(Route.builder("api").path("/api/**").rule("api").build())
        .global("backstop").allow(List.of("10.0.0.0/8")).clientAddress(resolver).build();
    Policy dry = p.withDryRun();
    assertThat(dry.dryRun()).isTrue();
    assertThat(dry.routes()).isEqualTo(p.routes());
    assertThat(dry.allow()).isEqualTo(p.allow());
    assertThat(dry.clientAddress()).isSameAs(resolver);
    assertThat(dry.global()).extracting(Rule::mode).containsOnly(Mode.SHADOW);
    assertThat(p.rules().get("api").mode()).isEqualTo(Mode.ENFORCE);
    assertThat(dry.withDryRun()).isSameAs(dry);
  }

  @Test
  void badRouteConditions_nameFieldAndValue() {
    assertThatThrownBy(() -> Route.builder("r").host("bad host"))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("host : bad host");
    assertThatThrownBy(() -> Route.builder("r").header("X Bad", "1"))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("header : X Bad");
    assertThatThrownBy(() -> Route.builder("r").from(List.of("10.0.0.300")))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("from : 10.0.0.300");
    assertThatThrownBy(() -> Policy.builder().allow(List.of("nope")))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("allow : nope");
  }

  @Test
  void ruleDelay_isBoundedAndCopiedByToBuilder() {
    Rule r = Rule.builder("d").limit(Limit.tokenBucket("d", 1, 10, Duration.ofSeconds(1)))
        .delay(Duration.ofMillis(500)).delayQueue(4).build();
    Rule copy = r.toBuilder().mode(Mode.SHADOW).build();
    assertThat(copy.delay()).isEqualTo(Duration.ofMillis(500));
    assertThat(copy.delayQueue()).isEqualTo(4);
    assertThatThrownBy(() -> Rule.builder("d").delay(Duration.ofMinutes(2)))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("delay : PT2M");
    assertThatThrownBy(() -> Rule.builder("d").delayQueue(0))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("delayQueue : 0");
  }
}
