package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One exact limit across a fleet: no over-admission under concurrency or across clients. */
class ExactLimitIntegrationTests {

  private static Store store(String prefix) {
    return Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(prefix).deadline(Duration.ofSeconds(2)).build());
  }

  @Test
  void twoClients_sharingOneRedis_admitExactlyTheLimit() throws Exception {
    String prefix = Stores.uniquePrefix("two");
    Rule rule = Rule.builder("shared")
        .limit(Limit.tokenBucket("bucket", 500, 1, Duration.ofHours(1))).build();
    try (Store a = store(prefix); Store b = store(prefix)) {
      RateLimiter[] instances = {RateLimiter.of(a), RateLimiter.of(b)};
      int[] counts = run(16, 10_000, i -> instances[i % 2].check(rule, Identity.ip("198.51.100.7")));
      assertThat(counts[0]).as("allowed").isEqualTo(500);
      assertThat(counts[1]).as("degraded").isZero();
    }
  }

  @Test
  void sixtyFourThreads_onOneKey_admitExactlyTheLimit() throws Exception {
    Rule rule = Rule.builder("hot")
        .limit(Limit.slidingLog("log", 700, Duration.ofHours(1)))
        .limit(Limit.fixedWindow("window", 1000, Duration.ofHours(1)))
        .limit(Limit.score("score", 800, 1, Duration.ofHours(1)))
        .build();
    try (Store store = store(Stores.uniquePrefix("hot"))) {
      RateLimiter limiter = RateLimiter.of(store);
      int[] counts = run(64, 6400, i -> limiter.check(rule, Identity.ip("203.0.113.9")));
      assertThat(counts[0]).as("allowed").isEqualTo(700);
      assertThat(counts[1]).as("degraded").isZero();
    }
  }

  interface Attempt {
    Decision run(int i);
  }

  /** Runs {@code attempts} from {@code threads} threads released together; {allowed, degraded}. */
  static int[] run(int threads, int attempts, Attempt attempt) throws Exception {
    AtomicInteger next = new AtomicInteger();
    AtomicInteger allowed = new AtomicInteger();
    AtomicInteger degraded = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      done.add(pool.submit(() -> {
        go.await();
        int i;
        while ((i = next.getAndIncrement()) < attempts) {
          Decision d = attempt.run(i);
          allowed.addAndGet(d.allowed() ? 1 : 0);
          degraded.addAndGet(d.degraded() ? 1 : 0);
        }
        return null;
      }));
    }
    go.countDown();
    for (Future<?> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    return new int[] {allowed.get(), degraded.get()};
  }
}
