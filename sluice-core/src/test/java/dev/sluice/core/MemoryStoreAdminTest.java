package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.address.ClientAddress;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory store's admin view: listing refused keys, a key's state, unban and reset. */
class MemoryStoreAdminTest {

  /** 3 calls, then one per second. */
  private static final Rule BUCKET = Rule.builder("bucket")
      .limit(Limit.tokenBucket("b", 3, 1, Duration.ofSeconds(1))).build();
  /** 1 call per second, then a one-hour ban. */
  private static final Rule BANS = Rule.builder("bans")
      .limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(1))).ban(Duration.ofHours(1)).build();
  private static final Rule PAIR = Rule.builder("pair").key("user:ip")
      .limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1))).build();

  private final FakeTicker ticker = new FakeTicker(Long.MAX_VALUE - 5_000_000_000L);
  private final Store store = Store.memory(ticker, 1000);
  private final RateLimiter limiter = RateLimiter.of(store);

  private static <T> T join(java.util.concurrent.CompletionStage<T> stage) {
    return stage.toCompletableFuture().join();
  }

  private List<String> refusedKeys(Rule rule, int limit) {
    return join(store.refusedAsync(rule, limit)).stream().map(KeyState::key).toList();
  }

  @Test
  void refusedKeys_areListedMostRecentFirst_untilTheyRefill() {
    for (String ip : List.of("192.0.2.1", "192.0.2.2")) {
      for (int i = 0; i < 4; i++) {
        limiter.check(BUCKET, Identity.ip(ip));
      }
      ticker.advance(Duration.ofMillis(100));
    }
    limiter.check(BUCKET, Identity.ip("192.0.2.3")); // allowed: never listed
    assertThat(refusedKeys(BUCKET, 10)).containsExactly("192.0.2.2", "192.0.2.1");
    assertThat(refusedKeys(BUCKET, 1)).containsExactly("192.0.2.2");
    KeyState first = join(store.refusedAsync(BUCKET, 10)).get(1);
    assertThat(first.refusedAgo()).isEqualTo(Duration.ofMillis(200));
    assertThat(first.limits().get(0).retryAfter()).isEqualTo(Duration.ofMillis(800));
    ticker.advance(Duration.ofMillis(800));
    assertThat(refusedKeys(BUCKET, 10)).as("192.0.2.1 has a token again")
        .containsExactly("192.0.2.2");
    ticker.advance(Duration.ofMillis(100));
    assertThat(refusedKeys(BUCKET, 10)).isEmpty();
  }

  @Test
  void aFloodFromOneKey_takesOneEntry_andAMultiRuleCheckNotesTheRefusingRule() {
    for (int i = 0; i < 1000; i++) {
      limiter.check(List.of(BUCKET, BANS), Identity.ip("198.51.100.7"), 1);
    }
    ticker.advanceNanos(1);
    limiter.check(BANS, Identity.ip("198.51.100.8"));
    limiter.check(BANS, Identity.ip("198.51.100.8"));
    assertThat(refusedKeys(BANS, 1000)).containsExactly("198.51.100.8", "198.51.100.7");
    assertThat(refusedKeys(BUCKET, 1000)).as("it allowed; the ban refused").isEmpty();
  }

  @Test
  void ban_isShown_thenLifted_andTheNextCallPasses() {
    Identity who = Identity.ip("203.0.113.9");
    assertThat(limiter.check(BANS, who).allowed()).isTrue();
    assertThat(limiter.check(BANS, who).allowed()).isFalse();
    ticker.advance(Duration.ofSeconds(2));
    assertThat(limiter.check(BANS, who).allowed()).as("the window is new, the ban holds")
        .isFalse();
    KeyState banned = join(store.keyStateAsync(BANS, "203.0.113.9"));
    assertThat(banned.present()).isTrue();
    assertThat(banned.banned()).isTrue();
    assertThat(banned.banLeft()).isEqualTo(Duration.ofHours(1).minusSeconds(2));
    assertThat(join(store.refusedAsync(BANS, 5)).get(0).key()).isEqualTo("203.0.113.9");

    assertThat(join(store.unbanAsync(BANS, "203.0.113.9"))).isTrue();
    assertThat(join(store.unbanAsync(BANS, "203.0.113.9"))).as("once").isFalse();
    assertThat(join(store.keyStateAsync(BANS, "203.0.113.9")).banned()).isFalse();
    assertThat(refusedKeys(BANS, 5)).isEmpty();
    assertThat(limiter.check(BANS, who).allowed()).isTrue();
  }

  @Test
  void reset_restoresTheFullLimit_forOneKeyOnly() {
    Identity a = Identity.ip(ClientAddress.parse("2001:db8::1"));
    Identity b = Identity.ip("192.0.2.50");
    for (int i = 0; i < 3; i++) {
      limiter.check(BUCKET, a);
      limiter.check(BUCKET, b);
    }
    assertThat(limiter.check(BUCKET, a).allowed()).isFalse();
    String key = BUCKET.keyText(a);
    assertThat(key).isEqualTo("2001%3Adb8%3A%3A1");
    assertThat(join(store.keyStateAsync(BUCKET, key)).limits().get(0).remaining()).isZero();
    assertThat(join(store.resetAsync(BUCKET, key))).isTrue();
    assertThat(join(store.resetAsync(BUCKET, key))).as("already fresh").isFalse();
    KeyState state = join(store.keyStateAsync(BUCKET, key));
    assertThat(state.limits().get(0)).isEqualTo(
        new KeyState.LimitState("b", 3, Duration.ZERO, Duration.ZERO));
    assertThat(state.refusing()).isFalse();
    assertThat(limiter.check(BUCKET, a).remaining()).isEqualTo(2);
    assertThat(limiter.check(BUCKET, b).allowed()).isFalse();
  }

  @Test
  void unknownKey_readsAsFresh_andEditsFindNothing() {
    KeyState s = join(store.keyStateAsync(BANS, "192.0.2.77"));
    assertThat(s.present()).isFalse();
    assertThat(s.banned()).isFalse();
    assertThat(s.limits()).containsExactly(
        new KeyState.LimitState("w", 1, Duration.ZERO, Duration.ZERO));
    assertThat(join(store.unbanAsync(BANS, "192.0.2.77"))).isFalse();
    assertThat(join(store.resetAsync(BANS, "192.0.2.77"))).isFalse();
    assertThat(store.size()).as("reading inserts nothing").isZero();
  }

  @Test
  void keysWithColonsSlashesAndSpaces_roundTrip() {
    Identity who = Identity.ip("192.0.2.1").with("user", "a/b:c d%");
    limiter.check(PAIR, who);
    limiter.check(PAIR, who);
    String key = PAIR.keyText(who);
    assertThat(key).isEqualTo("a/b%3Ac%20d%25:192.0.2.1");
    assertThat(PAIR.identityOf(key)).isEqualTo(who);
    assertThat(refusedKeys(PAIR, 10)).containsExactly(key);
    assertThat(join(store.keyStateAsync(PAIR, key)).refusing()).isTrue();
    assertThat(PAIR.identityOf("~unknown:192.0.2.1")).isEqualTo(Identity.ip("192.0.2.1"));
  }

  @Test
  void badKeys_nameTheFieldAndWhatWasExpected() {
    assertThatThrownBy(() -> PAIR.identityOf("192.0.2.1"))
        .isInstanceOf(InvalidValueException.class)
        .hasMessage("key : \"192.0.2.1\" (expected: 2 escaped value(s) joined by ':', for "
            + "user:ip)");
    assertThatThrownBy(() -> BUCKET.identityOf("#0123abcd"))
        .hasMessageStartingWith("key : \"#0123abcd\" (expected: no digest");
    assertThatThrownBy(() -> BUCKET.identityOf("a b")).isInstanceOf(InvalidValueException.class)
        .hasMessageContaining("escaped as listed");
    assertThatThrownBy(() -> BUCKET.identityOf("%zz")).hasMessageContaining("two hex digits");
    assertThatThrownBy(() -> BUCKET.identityOf("")).isInstanceOf(InvalidValueException.class);
    assertThatThrownBy(() -> join(store.refusedAsync(BUCKET, 0)))
        .hasMessageContaining("limit : 0 (expected: 1 to 1000)");
  }

  /**
   * Noting a refusal allocates nothing: the store's refused path stays at 0 bytes per check once
   * compiled (see MemoryTableTest for the allowed path).
   */
  @Test
  void refusedChecks_intoAReusedBuffer_allocateNothing() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Identity who = Identity.ip(ClientAddress.ipv4(0xCB00_7107));
    Verdicts d = new Verdicts();
    long id = Thread.currentThread().getId();
    for (Rule rule : List.of(BUCKET, BANS)) {
      for (int i = 0; i < 5; i++) {
        store.evaluate(rule.asList(), who, 1, d);
      }
      long least = Long.MAX_VALUE;
      for (int round = 0; round < 100 && least > 0; round++) {
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 10_000; i++) {
          store.evaluate(rule.asList(), who, 1, d);
        }
        least = Math.min(least, threads.getThreadAllocatedBytes(id) - before);
        assertThat(d.allowed(0)).isFalse();
      }
      assertThat(least).as("bytes per 10,000 refused checks of %s", rule.name()).isZero();
    }
  }
}
