package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryStoreTest {

  private static final Rule READ =
      Rule.builder("read").limit(Limit.tokenBucket("read", 120, 240, Duration.ofMinutes(1))).build();
  private static final Rule TIGHT =
      Rule.builder("tight").limit(Limit.fixedWindow("w", 1, Duration.ofHours(1))).build();

  private final FakeTicker ticker = new FakeTicker();

  @Test
  void millionDistinctKeys_stayUnderTheCap_andAnOverLimitKeyIsStillRefused() {
    Store store = Store.memory(ticker, 100_000);
    RateLimiter limiter = RateLimiter.of(store);
    Identity attacker = Identity.ip("198.51.100.66");
    assertThat(limiter.check(TIGHT, attacker).allowed()).isTrue();
    assertThat(limiter.check(TIGHT, attacker).allowed()).isFalse();
    long maxSeen = 0;
    for (int i = 0; i < 1_000_000; i++) {
      Identity flood = Identity.ip("10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255));
      limiter.check(i % 2 == 0 ? READ : TIGHT, flood);
      if ((i & 1023) == 0) {
        maxSeen = Math.max(maxSeen, store.size());
      }
    }
    assertThat(store.size()).isLessThanOrEqualTo(100_000);
    assertThat(maxSeen).isLessThanOrEqualTo(100_000);
    assertThat(limiter.check(TIGHT, attacker).allowed()).as("never reset by eviction").isFalse();
  }

  @Test
  void storesSharingARule_keepTheirBindings_andTheirOwnCounts() {
    Rule rule = Rule.builder("shared").limit(Limit.fixedWindow("w", 2, Duration.ofHours(1))).build();
    Identity client = Identity.ip("192.0.2.7");
    List<RateLimiter> limiters = List.of(RateLimiter.of(Store.memory(ticker, 1000)),
        RateLimiter.of(Store.memory(ticker, 1000)), RateLimiter.of(Store.memory(ticker, 1000)));
    for (RateLimiter limiter : limiters) {
      assertThat(limiter.check(rule, client).allowed()).isTrue();
    }
    // Each store bound the rule once: the checks that follow, in turn, rebind nothing.
    Object bound = rule.memoryBinding;
    for (RateLimiter limiter : limiters) {
      assertThat(limiter.check(rule, client).allowed()).isTrue();
      assertThat(limiter.check(rule, client).allowed()).as("each store counts its own").isFalse();
    }
    assertThat(rule.memoryBinding).isSameAs(bound);
    // Past the bindings a rule keeps, a store still decides on its own table.
    List<RateLimiter> more = new java.util.ArrayList<>();
    for (int i = 0; i < MemoryStore.BINDINGS + 2; i++) {
      more.add(RateLimiter.of(Store.memory(ticker, 1000)));
    }
    for (int round = 0; round < 3; round++) {
      for (RateLimiter limiter : more) {
        assertThat(limiter.check(rule, client).allowed()).isEqualTo(round < 2);
      }
    }
  }

  @Test
  void freshStateIsDropped_withoutChangingAnyDecision() {
    Store store = Store.memory(ticker, 11);
    RateLimiter limiter = RateLimiter.of(store);
    for (int i = 0; i < 10; i++) {
      limiter.check(READ, Identity.ip("192.0.2." + i));
    }
    assertThat(store.size()).isEqualTo(10);
    ticker.advance(Duration.ofSeconds(1));
    // Every bucket is full again: fresh. A new key sweeps them all out.
    limiter.check(READ, Identity.ip("192.0.2.200"));
    assertThat(store.size()).isEqualTo(1);
    assertThat(RateLimiter.of(store).check(READ, Identity.ip("192.0.2.1")).remaining())
        .isEqualTo(119);
  }

  @Test
  void idleKeys_areSweptLongBeforeTheCap() {
    Store store = Store.memory(ticker, 1_000_000);
    RateLimiter limiter = RateLimiter.of(store);
    for (int i = 0; i < 49_999; i++) {
      limiter.check(READ, Identity.ip("10.0." + (i >> 8) + "." + (i & 255)));
    }
    assertThat(store.size()).isEqualTo(49_999);
    ticker.advance(Duration.ofSeconds(1));
    limiter.check(READ, Identity.ip("192.0.2.1"));
    assertThat(store.size()).as("the 50,000th new key swept the full buckets").isEqualTo(1);
  }

  @Test
  void capFullOfRefusingKeys_newKeysShareAnOverflowBucket() {
    // A cap of 5 keeps one place for the overflow bucket: four ordinary keys fit.
    Store store = Store.memory(ticker, 5);
    RateLimiter limiter = RateLimiter.of(store);
    for (int i = 0; i < 4; i++) {
      Identity who = Identity.ip("192.0.2." + i);
      limiter.check(TIGHT, who);
      assertThat(limiter.check(TIGHT, who).allowed()).isFalse();
    }
    assertThat(limiter.check(TIGHT, Identity.ip("203.0.113.1")).allowed()).isTrue();
    assertThat(limiter.check(TIGHT, Identity.ip("203.0.113.2")).allowed())
        .as("shares the overflow bucket: a key flood cannot escape limiting").isFalse();
    for (int i = 0; i < 4; i++) {
      assertThat(limiter.check(TIGHT, Identity.ip("192.0.2." + i)).allowed()).isFalse();
    }
  }

  @Test
  void reloadWithChangedLimits_resetsOnlyThatRulesState() {
    Store store = Store.memory(ticker, 100);
    RateLimiter limiter = RateLimiter.of(store);
    Identity who = Identity.ip("192.0.2.1");
    limiter.check(TIGHT, who);
    Rule sameShape = TIGHT.toBuilder().build();
    assertThat(limiter.check(sameShape, who).allowed()).as("same layout keeps counts").isFalse();
    Rule wider = Rule.builder("tight").limit(Limit.fixedWindow("w", 5, Duration.ofHours(1)))
        .build();
    assertThat(limiter.check(List.of(wider), who, 1).allowed()).isTrue();
  }

  /**
   * Regression: a check of two rules on a store of fewer than ten keys looped for ever. Full, the
   * store sweeps on every miss; relocating the two keys after the sweep killed one, the second's
   * sweep dropped the fresh key just inserted for the first, and so on. Relocation no longer
   * sweeps. Thirty clients over caps of 1 to 40 keys: every check returns, within the cap.
   */
  @Test
  @org.junit.jupiter.api.Timeout(value = 120, threadMode =
      org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
  void twoRulesOnATinyStore_everyCheckReturns_andTheCapHolds() {
    Rule bucket = Rule.builder("bucket")
        .limit(Limit.tokenBucket("bucket", 3, 6, Duration.ofSeconds(1))).build();
    Rule window = Rule.builder("window")
        .limit(Limit.fixedWindow("window", 4, Duration.ofSeconds(2))).build();
    for (int cap = 1; cap <= 40; cap++) {
      Store store = Store.memory(ticker, cap);
      RateLimiter limiter = RateLimiter.of(store);
      MutableDecision d = new MutableDecision();
      int allowed = 0;
      for (int i = 0; i < 2_000; i++) {
        ticker.advance(Duration.ofMillis(300));
        if (limiter.check(List.of(bucket, window), Identity.ip("192.0.2." + (i % 30)), 1, d)) {
          allowed++;
        }
        assertThat(store.size()).as("cap " + cap).isLessThanOrEqualTo(cap);
      }
      assertThat(allowed).as("cap " + cap).isPositive();
    }
  }
}
