package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Identity;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.KeyState;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The Redis store's admin view against a real redis-server, and against the in-memory store. */
class AdminIntegrationTests {

  /** A multiple of every window here (6 s), so windows start together in both stores. */
  private static final long BASE_MICROS = 1_699_999_998_000_000L;

  /** 1 call per second, then a one-hour ban. */
  private static final Rule BANS = Rule.builder("bans")
      .limit(Limit.fixedWindow("w", 1, Duration.ofSeconds(1))).ban(Duration.ofHours(1)).build();
  private static final Rule BUCKET = Rule.builder("bucket").key("user:ip")
      .limit(Limit.tokenBucket("b", 3, 1, Duration.ofSeconds(1))).build();

  private final AtomicLong nanos = new AtomicLong();

  private static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().join();
  }

  /** Redis counts microseconds: a Java duration rounded up to one, as the client rounds. */
  private static Duration micros(Duration d) {
    return Duration.ofNanos(-Math.floorDiv(-d.toNanos(), 1000L) * 1000L);
  }

  private Store pinned(String uri, String name) {
    return Stores.connected(RedisStore.builder().uri(uri).keyPrefix(Stores.uniquePrefix(name))
        .deadline(Duration.ofSeconds(5)).pinnedClock(() -> BASE_MICROS + nanos.get() / 1000)
        .build());
  }

  @Test
  void banIsListed_shown_lifted_andTheNextCallPasses() {
    try (Store store = pinned(Servers.standalone().uri(), "bans")) {
      RateLimiter limiter = RateLimiter.of(store);
      Identity who = Identity.ip("203.0.113.9");
      assertThat(limiter.check(BANS, who).allowed()).isTrue();
      assertThat(limiter.check(BANS, who).allowed()).isFalse();
      nanos.addAndGet(Duration.ofSeconds(2).toNanos());
      assertThat(limiter.check(BANS, who).allowed()).as("a new window; the ban holds").isFalse();
      nanos.addAndGet(Duration.ofMillis(500).toNanos());

      List<KeyState> refused = join(store.refusedAsync(BANS, 10));
      assertThat(refused).extracting(KeyState::key).containsExactly("203.0.113.9");
      assertThat(refused.get(0).refusedAgo()).isEqualTo(Duration.ofMillis(500));
      KeyState banned = join(store.keyStateAsync(BANS, "203.0.113.9"));
      assertThat(banned.present()).isTrue();
      assertThat(banned.banLeft()).isEqualTo(Duration.ofHours(1).minusMillis(2500));

      assertThat(join(store.unbanAsync(BANS, "203.0.113.9"))).isTrue();
      assertThat(join(store.unbanAsync(BANS, "203.0.113.9"))).as("once").isFalse();
      assertThat(join(store.keyStateAsync(BANS, "203.0.113.9")).banned()).isFalse();
      assertThat(join(store.refusedAsync(BANS, 10))).as("no longer refusing").isEmpty();
      assertThat(limiter.check(BANS, who).allowed()).isTrue();
    }
  }

  @Test
  void reset_restoresTheFullLimit_forKeysWithColonsAndSlashes() {
    try (Store store = pinned(Servers.standalone().uri(), "reset")) {
      RateLimiter limiter = RateLimiter.of(store);
      Identity who = Identity.ip("192.0.2.1").with("user", "a/b:c d");
      Identity other = Identity.ip("192.0.2.2").with("user", "z");
      for (int i = 0; i < 4; i++) {
        limiter.check(BUCKET, who);
        limiter.check(BUCKET, other);
      }
      String key = BUCKET.keyText(who);
      assertThat(key).isEqualTo("a/b%3Ac%20d:192.0.2.1");
      assertThat(join(store.refusedAsync(BUCKET, 1000))).extracting(KeyState::key)
          .containsExactlyInAnyOrder(key, "z:192.0.2.2");
      assertThat(join(store.keyStateAsync(BUCKET, key)).limits().get(0).remaining()).isZero();
      assertThat(join(store.resetAsync(BUCKET, key))).isTrue();
      assertThat(join(store.resetAsync(BUCKET, key))).as("nothing left").isFalse();
      KeyState fresh = join(store.keyStateAsync(BUCKET, key));
      assertThat(fresh.present()).isFalse();
      assertThat(fresh.limits()).containsExactly(
          new KeyState.LimitState("b", 3, Duration.ZERO, Duration.ZERO));
      assertThat(limiter.check(BUCKET, who).remaining()).isEqualTo(2);
      assertThat(limiter.check(BUCKET, other).allowed()).isFalse();
    }
  }

  @Test
  void badKeysAndLimits_failTheStage_namingTheField() {
    try (Store store = pinned(Servers.standalone().uri(), "bad")) {
      assertThatThrownBy(() -> join(store.keyStateAsync(BUCKET, "only-one-part")))
          .isInstanceOf(CompletionException.class).cause()
          .isInstanceOf(InvalidValueException.class).hasMessageStartingWith("key : ");
      assertThatThrownBy(() -> join(store.refusedAsync(BUCKET, 0))).cause()
          .hasMessage("limit : 0 (expected: 1 to 1000)");
    }
  }

  @Test
  void refusedKeys_onACluster_areListedFromEverySlot() {
    RedisCluster cluster = Servers.cluster();
    try (Store store = pinned(cluster.uri(), "cluster")) {
      RateLimiter limiter = RateLimiter.of(store);
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        Identity who = Identity.ip("198.51.100." + i);
        limiter.check(BANS, who);
        limiter.check(BANS, who);
        keys.add(BANS.keyText(who));
        nanos.addAndGet(1000);
      }
      List<String> listed = new ArrayList<>();
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (listed.size() < 20 && System.nanoTime() < until) {
        listed = join(store.refusedAsync(BANS, 100)).stream().map(KeyState::key).toList();
        if (listed.size() < 20) {
          RedisProcess.pause(10); // the notes went to other masters than the listing's
        }
      }
      java.util.Collections.reverse(keys);
      assertThat(listed).as("most recent first").containsExactlyElementsOf(keys);
      assertThat(join(store.unbanAsync(BANS, keys.get(7)))).isTrue();

      assertThat(join(store.keyStateAsync(BANS, keys.get(7))).banned()).isFalse();
    }
  }

  /**
   * One trace on both stores, then every key's state read from each: the admin view shows the
   * same thing whichever store holds the keys (the Java-vs-Lua differential test, for peek).
   */
  @Test
  void keyState_isTheSameInMemoryAndInRedis() {
    List<Rule> rules = List.of(
        Rule.builder("tb").limit(Limit.tokenBucket("t", 5, 2, Duration.ofSeconds(1))).build(),
        Rule.builder("fw").limit(Limit.fixedWindow("f", 4, Duration.ofSeconds(2)))
            .ban(Duration.ofSeconds(3)).build(),
        Rule.builder("sw").limit(Limit.slidingWindow("s", 6, Duration.ofSeconds(3)))
            .limit(Limit.slidingLog("l", 4, Duration.ofSeconds(1))).build(),
        Rule.builder("sc").limit(Limit.score("p", 10, 3, Duration.ofSeconds(2)))
            .ban(Duration.ofSeconds(5)).build());
    Store memory = Store.memory(nanos::get, 10_000);
    try (Store redis = Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(Stores.uniquePrefix("peekdiff")).deadline(Duration.ofSeconds(5))
        .refusalCacheSize(0).pinnedClock(() -> BASE_MICROS + nanos.get() / 1000).build())) {
      RateLimiter onMemory = RateLimiter.of(memory);
      RateLimiter onRedis = RateLimiter.of(redis);
      Random rnd = new Random(7);
      String[] ips = {"192.0.2.1", "192.0.2.2", "192.0.2.3"};
      for (int step = 0; step < 400; step++) {
        nanos.addAndGet((long) rnd.nextInt(150_000) * 1000L);
        Rule rule = rules.get(rnd.nextInt(rules.size()));
        Identity who = Identity.ip(ips[rnd.nextInt(ips.length)]);
        assertThat(onRedis.check(rule, who).allowed()).as("step %d", step)
            .isEqualTo(onMemory.check(rule, who).allowed());
        if (step % 20 == 19) {
          for (Rule r : rules) {
            for (String ip : ips) {
              KeyState m = join(memory.keyStateAsync(r, ip));
              KeyState x = join(redis.keyStateAsync(r, ip));
              assertThat(x.banLeft()).as("%s %s step %d", r.name(), ip, step)
                  .isEqualTo(micros(m.banLeft()));
              assertThat(x.limits()).as("%s %s step %d", r.name(), ip, step)
                  .isEqualTo(m.limits().stream().map(l -> new KeyState.LimitState(l.name(),
                      l.remaining(), micros(l.reset()), micros(l.retryAfter()))).toList());
            }
          }
        }
      }
    }
  }
}
