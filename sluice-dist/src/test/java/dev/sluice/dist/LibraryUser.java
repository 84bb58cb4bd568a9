package dev.sluice.dist;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.redis.RedisStore;
import java.time.Duration;

/**
 * A library user's program, run by {@link LibraryUserIntegrationTests} on exactly the class
 * path the BOM gives a user (sluice-bom/consumer-check): a Redis store, one decision, closed.
 */
public final class LibraryUser {

  private LibraryUser() {}

  public static void main(String[] args) throws Exception {
    Rule rule = Rule.builder("api")
        .limit(Limit.tokenBucket("per-second", 10, 10, Duration.ofSeconds(1))).build();
    Store store = RedisStore.builder().uri(args[0]).awaitConnected(Duration.ofSeconds(10))
        .build();
    try {
      Decision d = RateLimiter.of(store).check(rule, Identity.ip("203.0.113.7"));
      System.out.println("allowed=" + d.allowed() + " remaining=" + d.remaining()
          + " degraded=" + d.degraded());
    } finally {
      store.close();
    }
  }
}
