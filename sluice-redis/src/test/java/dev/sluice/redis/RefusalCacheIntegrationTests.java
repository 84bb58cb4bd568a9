package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A flood from one refused key costs about one Redis call per retry-after, not one per call. */
class RefusalCacheIntegrationTests {

  @Test
  void floodFromOneRefusedKey_makesABoundedNumberOfRedisCalls() {
    RedisProcess redis = Servers.standalone();
    Rule rule = Rule.builder("flood")
        .limit(Limit.tokenBucket("bucket", 10, 1, Duration.ofHours(1))).build();
    try (Store store = Stores.connected(RedisStore.builder().uri(redis.uri())
        .keyPrefix(Stores.uniquePrefix("flood")).build())) {
      RateLimiter limiter = RateLimiter.of(store);
      long before = redis.scriptCalls();
      int allowed = 0;
      for (int i = 0; i < 10_000; i++) {
        Decision d = limiter.check(rule, Identity.ip("192.0.2.66"));
        assertThat(d.degraded()).isFalse();
        allowed += d.allowed() ? 1 : 0;
        if (!d.allowed()) {
          assertThat(d.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofHours(1));
        }
      }
      long calls = redis.scriptCalls() - before - Stores.adminNotes(store);
      assertThat(allowed).isEqualTo(10);
      assertThat(calls).as("Redis script calls for 10,000 checks").isLessThanOrEqualTo(12);
    }
  }

  @Test
  void refusalCache_isBounded() {
    Rule rule = Rule.builder("many")
        .limit(Limit.fixedWindow("w", 1, Duration.ofHours(1))).build();
    try (Store store = Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(Stores.uniquePrefix("bounded")).refusalCacheSize(100).build())) {
      RateLimiter limiter = RateLimiter.of(store);
      for (int k = 0; k < 500; k++) {
        Identity id = Identity.ip("10.1." + (k / 250) + "." + (k % 250));
        assertThat(limiter.check(rule, id).allowed()).isTrue();
        assertThat(limiter.check(rule, id).allowed()).isFalse();
      }
      assertThat(((LettuceStore) store).refusalCacheEntries()).isLessThanOrEqualTo(100);
    }
  }
}
