package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleTest {

  /** Seed 003's chat:send: 20 per 10 s window AND score 1 per action, max 10, 1 per 2 s; ban 30 s. */
  private static final Rule CHAT_SEND = Rule.builder("chat:send")
      .key("event:user:ip")
      .limit(Limit.slidingLog("window", 20, Duration.ofSeconds(10)))
      .limit(Limit.score("score", 10, 1, Duration.ofSeconds(2)))
      .ban(Duration.ofSeconds(30))
      .build();

  private static final Identity ALICE =
      Identity.ip("203.0.113.10").with("user", "user123").with("event", "chat:send");

  private final FakeTicker ticker = new FakeTicker();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 10_000));

  @Test
  void seed003_scoreRefusesFirst_andTheBanIsAppliedOnce() {
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.check(CHAT_SEND, ALICE).allowed()).isTrue();
    }
    Decision eleventh = limiter.check(CHAT_SEND, ALICE);
    assertThat(eleventh.allowed()).isFalse();
    assertThat(eleventh.limitName()).isEqualTo("score");
    assertThat(eleventh.banApplied()).isTrue();
    assertThat(eleventh.currentScore()).isEqualTo(10.0);
    assertThat(eleventh.maxScore()).isEqualTo(10.0);
    assertThat(eleventh.retryAfterNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());

    ticker.advance(Duration.ofSeconds(10));
    Decision retry = limiter.check(CHAT_SEND, ALICE);
    assertThat(retry.allowed()).isFalse();
    assertThat(retry.banned()).isTrue();
    assertThat(retry.banApplied()).as("applied once, not on every retry").isFalse();
    assertThat(retry.retryAfterNanos()).as("retries do not extend the ban")
        .isEqualTo(Duration.ofSeconds(20).toNanos());

    ticker.advance(Duration.ofSeconds(20));
    Decision after = limiter.check(CHAT_SEND, ALICE);
    assertThat(after.allowed()).as("the score decayed to zero during the ban").isTrue();
  }

  @Test
  void whileBanned_countersAreNotTouched() {
    for (int i = 0; i < 11; i++) {
      limiter.check(CHAT_SEND, ALICE);
    }
    for (int i = 0; i < 1000; i++) {
      limiter.check(CHAT_SEND, ALICE);
    }
    ticker.advance(Duration.ofSeconds(30));
    // The window holds only the 10 accepted hits from t = 0, which left it at 10 s.
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.check(CHAT_SEND, ALICE).allowed()).isTrue();
    }
  }

  @Test
  void windowRefuses_pacedCallerJustUnderTheScore() {
    Rule tight = Rule.builder("typing").key("user")
        .limit(Limit.slidingLog("window", 3, Duration.ofSeconds(10)))
        .limit(Limit.score("score", 6, 0.2, Duration.ofMillis(1500)))
        .build();
    Identity bob = Identity.empty().with("user", "bob");
    assertThat(limiter.check(tight, bob).allowed()).isTrue();
    assertThat(limiter.check(tight, bob).allowed()).isTrue();
    assertThat(limiter.check(tight, bob).allowed()).isTrue();
    Decision fourth = limiter.check(tight, bob);
    assertThat(fourth.limitName()).isEqualTo("window");
    assertThat(fourth.currentScore()).as("only a refusing score reports the score").isNaN();
  }

  @Test
  void sessionThenIp_aRefusalConsumesNothingAnywhere() {
    Rule session = Rule.builder("results-session").key("session")
        .limit(Limit.slidingLog("session", 12, Duration.ofMinutes(1))).build();
    Rule ip = Rule.builder("results-ip").key("ip")
        .limit(Limit.slidingLog("ip", 2, Duration.ofMinutes(1))).build();
    List<Rule> both = List.of(session, ip);
    Identity s1 = Identity.ip("198.51.100.1").with("session", "s1");
    Identity s2 = Identity.ip("198.51.100.1").with("session", "s2");
    assertThat(limiter.check(both, s1, 1).allowed()).isTrue();
    assertThat(limiter.check(both, s1, 1).allowed()).isTrue();
    Decision third = limiter.check(both, s1, 1);
    assertThat(third.allowed()).isFalse();
    assertThat(third.rule()).isEqualTo("results-ip");
    for (int i = 0; i < 20; i++) {
      assertThat(limiter.check(both, s1, 1).allowed()).isFalse();
    }
    // Session s1 used 2 of its 12, not 23: alone it still has 10.
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.check(session, s1).allowed()).isTrue();
    }
    assertThat(limiter.check(session, s1).allowed()).isFalse();
    assertThat(limiter.check(session, s2).allowed()).isTrue();
  }

  @Test
  void shadowRule_decidesAndReports_butAllows() {
    Rule shadow = Rule.builder("arcjet").limit(Limit.tokenBucket("b", 2, 10, Duration.ofMinutes(1)))
        .mode(Mode.SHADOW).build();
    Identity who = Identity.ip("192.0.2.9");
    assertThat(limiter.check(shadow, who).shadowRefused()).isFalse();
    assertThat(limiter.check(shadow, who).shadowRefused()).isFalse();
    Decision third = limiter.check(shadow, who);
    assertThat(third.allowed()).isTrue();
    assertThat(third.shadowRefused()).isTrue();
    assertThat(third.shadowRule()).isEqualTo("arcjet");
  }

  @Test
  void shadowRule_neverRollsBackAnEnforcedRule() {
    Rule shadow = Rule.builder("shadow").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .mode(Mode.SHADOW).build();
    Rule enforced = Rule.builder("enforced").limit(Limit.fixedWindow("w", 3, Duration.ofMinutes(1)))
        .build();
    Identity who = Identity.ip("192.0.2.9");
    List<Rule> both = List.of(shadow, enforced);
    assertThat(limiter.check(both, who, 1).allowed()).isTrue();
    assertThat(limiter.check(both, who, 1).shadowRefused()).isTrue();
    assertThat(limiter.check(both, who, 1).allowed()).isTrue();
    Decision fourth = limiter.check(both, who, 1);
    assertThat(fourth.allowed()).isFalse();
    assertThat(fourth.rule()).isEqualTo("enforced");
  }

  @Test
  void offRule_isNotEvaluated() {
    Rule off = Rule.builder("off").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .mode(Mode.OFF).build();
    for (int i = 0; i < 5; i++) {
      Decision d = limiter.check(off, Identity.ip("192.0.2.1"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.rule()).isNull();
    }
    assertThat(limiter.store().size()).isZero();
  }

  @Test
  void missingDimension_fallsIntoTheSharedBucket_neverAllow() {
    Rule perUser = Rule.builder("poll").key("participant")
        .limit(Limit.fixedWindow("w", 2, Duration.ofMinutes(1))).build();
    assertThat(perUser.keyFor(Identity.ip("1.2.3.4"))).isEqualTo("poll:~unknown");
    assertThat(limiter.check(perUser, Identity.ip("1.2.3.4")).allowed()).isTrue();
    assertThat(limiter.check(perUser, Identity.empty()).allowed()).isTrue();
    assertThat(limiter.check(perUser, Identity.empty().with("participant", " ")).allowed())
        .isFalse();
    // A participant literally named "unknown" is not the shared bucket.
    assertThat(perUser.keyFor(Identity.empty().with("participant", "unknown")))
        .isEqualTo("poll:unknown");
  }

  @Test
  void hostileIdentityValues_neverReachAKeyVerbatim() {
    Rule rule = Rule.builder("r").key("user:ip").limit(Limit.fixedWindow("w", 1,
        Duration.ofSeconds(1))).build();
    String key = rule.keyFor(Identity.ip("1.2.3.4").with("user", "a:b{c}\n\u0000%~é"));
    assertThat(key).isEqualTo("r:a%3Ab%7Bc%7D%0A%00%25%7E%C3%A9:1.2.3.4");
    String longKey = rule.keyFor(Identity.ip("1.2.3.4").with("user", "x".repeat(10_000)));
    assertThat(longKey).startsWith("r:#").hasSize("r:#".length() + 32 + ":1.2.3.4".length());
    assertThat(rule.keyFor(Identity.ip("1.2.3.4").with("user", "y".repeat(10_000))))
        .isNotEqualTo(longKey);
  }

  @Test
  void builderErrors_nameFieldValueAndExpectation() {
    assertThatThrownBy(() -> Rule.builder("r").build())
        .hasMessage("limits : [] (expected: at least one limit in rule 'r')");
    assertThatThrownBy(() -> Rule.builder("r").key("user:"))
        .hasMessage("key : \"user:\" (expected: dimension names joined by ':', like \"event:user:ip\")");
    assertThatThrownBy(() -> Rule.builder("r")
        .limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(1)))
        .limit(Limit.fixedWindow("w", 2, Duration.ofSeconds(1))).build())
        .hasMessage("limits : 'w' appears twice (expected: unique limit names in rule 'r')");
    assertThatThrownBy(() -> Rule.builder(" "))
        .hasMessage("name : \" \" (expected: 1..128 printable ASCII characters, not blank)");
    assertThatThrownBy(() -> Rule.builder("r").ban(Duration.ofSeconds(-1)))
        .hasMessage("ban : PT-1S (expected: >= 1ms)");
  }

  /** Regression (issue 7): "unicode rule" showed as "?n?code rule" in RateLimit-Policy. */
  @Test
  void nonAsciiNames_areRejected() {
    assertThatThrownBy(() -> Rule.builder("\u00fcnicode rule"))
        .isInstanceOf(InvalidValueException.class)
        .hasMessage("name : \"\u00fcnicode rule\" (expected: 1..128 printable ASCII characters, "
            + "not blank)");
    assertThatThrownBy(() -> Limit.fixedWindow("tab\there", 1, Duration.ofSeconds(1)))
        .isInstanceOf(InvalidValueException.class);
  }

  /** Regression (issue 7): metrics saw only the deciding rule, so a global backstop showed 0. */
  @Test
  void everyEvaluatedRule_reportsWhetherItRefused() {
    Rule route = Rule.builder("route")
        .limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(10))).build();
    Rule off = Rule.builder("off").mode(Mode.OFF)
        .limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(10))).build();
    Rule backstop = Rule.builder("backstop").mode(Mode.SHADOW)
        .limit(Limit.fixedWindow("w", 2, Duration.ofSeconds(10))).build();
    List<Rule> rules = List.of(route, off, backstop);
    Identity who = Identity.ip("203.0.113.10");

    Decision first = limiter.check(rules, who, 1);
    assertThat(first.allowed()).isTrue();
    assertThat(List.of(first.refusedBy(0), first.refusedBy(1), first.refusedBy(2)))
        .containsExactly(false, false, false);
    Decision second = limiter.check(rules, who, 1);
    assertThat(second.allowed()).isFalse();
    assertThat(List.of(second.refusedBy(0), second.refusedBy(1), second.refusedBy(2)))
        .containsExactly(true, false, false);
    limiter.check(List.of(backstop), who, 1);
    Decision third = limiter.check(rules, who, 1);
    assertThat(List.of(third.refusedBy(0), third.refusedBy(1), third.refusedBy(2)))
        .containsExactly(true, false, true);
  }

  /** Regression (issue 7): unpaired surrogates all encoded to %3F and shared one bucket. */
  @Test
  void unpairedSurrogates_getDistinctKeys() {
    Rule r = Rule.builder("r").key("user")
        .limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(1))).build();
    List<String> keys = new java.util.ArrayList<>();
    for (String value : List.of("\uD800", "\uDC00", "\uDBFF", "?", "\uD800\uD800")) {
      keys.add(r.keyFor(Identity.empty().with("user", value)));
    }
    assertThat(new java.util.HashSet<>(keys)).hasSize(5);
    assertThat(keys.get(0)).isEqualTo("r:%ED%A0%80");
    assertThat(r.keyFor(Identity.empty().with("user", "\uD83D\uDE00"))).isEqualTo("r:%F0%9F%98%80");
    assertThat(r.keyFor(Identity.empty().with("user", "\u00e9"))).isEqualTo("r:%C3%A9");
  }
}
