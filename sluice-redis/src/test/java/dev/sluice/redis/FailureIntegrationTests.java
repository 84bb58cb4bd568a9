package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Seed 002: a protection must not become the outage. Each test runs its own redis-server and
 * breaks it for real (SIGSTOP, SIGKILL, SCRIPT FLUSH, absent at start).
 */
class FailureIntegrationTests {

  private static final long DEADLINE_MS = 50;
  /**
   * Scheduling and GC noise on a small shared test machine (2 CPUs), on top of the deadline: a
   * deadline not kept is a second or more (the store's own timeouts), far above it.
   */
  private static final long SLACK_MS = 250;

  private static final Rule OPEN = Rule.builder("open")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .onStoreError(OnStoreError.ALLOW).build();
  private static final Rule GUARDED = Rule.builder("guarded")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .onStoreError(OnStoreError.DENY).build();

  private static Store store(String uri) {
    return RedisStore.builder().uri(uri).keyPrefix(Stores.uniquePrefix("fail"))
        .deadline(Duration.ofMillis(DEADLINE_MS)).build();
  }

  @Test
  void sigstop_everyDecisionReturnsWithinDeadline_withItsRulesOutcome_thenResumes()
      throws Exception {
    try (RedisProcess redis = RedisProcess.start();
        Store store = Stores.connected(store(redis.uri()))) {
      RateLimiter limiter = RateLimiter.of(store);
      assertThat(limiter.check(OPEN, Identity.ip("10.0.0.1")).degraded()).isFalse();

      redis.suspend();
      try {
        AtomicLong slowest = new AtomicLong();
        AtomicInteger wrong = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
          int thread = t;
          done.add(pool.submit(() -> {
            for (int i = 0; i < 40; i++) {
              Rule rule = (i + thread) % 2 == 0 ? OPEN : GUARDED;
              long start = System.nanoTime();
              Decision d = limiter.check(rule, Identity.ip("10.0.0." + thread));
              slowest.accumulateAndGet(System.nanoTime() - start, Math::max);
              boolean expected = rule == OPEN;
              if (!d.degraded() || d.allowed() != expected) {
                wrong.incrementAndGet();
              }
            }
          }));
        }
        for (Future<?> f : done) {
          f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(wrong).as("decisions not degraded or with the wrong outcome").hasValue(0);
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowest.get())).as("slowest decision, ms")
            .isLessThanOrEqualTo(DEADLINE_MS + SLACK_MS);
      } finally {
        redis.resume();
      }
      assertThat(recoveryMillis(limiter)).as("ms from SIGCONT until decisions are served")
          .isLessThan(1000);
    }
  }

  @Test
  void killed_withALocalFallback_failsLocal_limitedAndMarkedDegraded() {
    Rule three = Rule.builder("three").limit(Limit.fixedWindow("w", 3, Duration.ofHours(1)))
        .onStoreError(OnStoreError.ALLOW).build();
    try (RedisProcess redis = RedisProcess.start();
        Store store = Stores.connected(RedisStore.builder().uri(redis.uri())
            .keyPrefix(Stores.uniquePrefix("fallback")).deadline(Duration.ofMillis(DEADLINE_MS))
            .fallback(Store.memory(dev.sluice.core.Ticker.system(), 1000)).build())) {
      RateLimiter limiter = RateLimiter.of(store);
      assertThat(limiter.check(three, Identity.ip("10.0.0.1")).degraded()).isFalse();
      redis.kill();
      List<Boolean> allowed = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        Decision d = limiter.check(three, Identity.ip("10.0.0.1"));
        assertThat(d.degraded()).as("answered by the fallback").isTrue();
        allowed.add(d.allowed());
      }
      // "Fails local" rather than "fails open": the fallback still limits.
      assertThat(allowed).containsExactly(true, true, true, false, false);
    }
  }

  /** EVALSHA path (functions off): SCRIPT FLUSH every 100 checks. */
  @Test
  void scriptFlush_midRun_noErrorReachesACaller() throws Exception {
    Rule rule = Rule.builder("flush")
        .limit(Limit.slidingLog("log", 3000, Duration.ofHours(1)))
        .limit(Limit.score("score", 6000, 1, Duration.ofHours(1)))
        .build();
    flushMidRun(false, rule, List.of("SCRIPT FLUSH"));
  }

  /**
   * FCALL path: FUNCTION FLUSH and SCRIPT FLUSH in turn every 100 checks, on the general script
   * and on the token-bucket fast path; each flush of the library sends calls to EVALSHA (and a
   * flushed script to EVAL) while the library is reloaded.
   */
  @Test
  void functionFlush_midRun_noErrorReachesACaller() throws Exception {
    Rule general = Rule.builder("fflush")
        .limit(Limit.slidingLog("log", 3000, Duration.ofHours(1)))
        .limit(Limit.score("score", 6000, 1, Duration.ofHours(1)))
        .build();
    flushMidRun(true, general, List.of("FUNCTION FLUSH", "SCRIPT FLUSH"));
    Rule bucket = Rule.builder("bflush")
        .limit(Limit.tokenBucket("bucket", 3000, 1, Duration.ofHours(1)))
        .build();
    flushMidRun(true, bucket, List.of("FUNCTION FLUSH", "SCRIPT FLUSH"));
  }

  private static void flushMidRun(boolean functions, Rule rule, List<String> flushes)
      throws Exception {
    try (RedisProcess redis = RedisProcess.start();
        Store store = Stores.connected(RedisStore.builder().uri(redis.uri())
            .keyPrefix(Stores.uniquePrefix("flush")).deadline(Duration.ofSeconds(2))
            .functions(functions).build())) {
      RateLimiter limiter = RateLimiter.of(store);
      AtomicInteger attempts = new AtomicInteger();
      AtomicInteger allowed = new AtomicInteger();
      AtomicInteger degraded = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        done.add(pool.submit(() -> {
          while (attempts.incrementAndGet() <= 4000) {
            Decision d = limiter.check(rule, Identity.ip("192.0.2.1"));
            allowed.addAndGet(d.allowed() ? 1 : 0);
            degraded.addAndGet(d.degraded() ? 1 : 0);
          }
        }));
      }
      int flushed = 0;
      int next = 100;
      while (attempts.get() < 4000) {
        if (attempts.get() >= next) {
          String[] command = flushes.get(flushed % flushes.size()).split(" ");
          assertThat(redis.cmd(command)).isEqualTo("+OK");
          flushed++;
          next += 100;
        }
        Thread.onSpinWait();
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      assertThat(flushed).isGreaterThan(20);
      assertThat(degraded).hasValue(0);
      assertThat(allowed).hasValue(3000);
      if (functions) {
        assertThat(redis.calls("fcall")).as("FCALLs (the library was reloaded)")
            .isGreaterThan(0);
      } else {
        assertThat(redis.calls("fcall")).isZero();
      }
    }
  }

  @Test
  void startsWithoutRedis_degraded_thenConnectsWhenItComes() {
    int port = RedisProcess.freePort();
    try (Store store = store("redis://127.0.0.1:" + port)) {
      RateLimiter limiter = RateLimiter.of(store);
      assertDeniedInTime(limiter, 20);
      try (RedisProcess redis = RedisProcess.startOn(port)) {
        assertThat(recoveryMillis(limiter)).as("ms from start until decisions are served")
            .isLessThan(5000);
      }
    }
  }

  /** Polls (bounded) until a decision is served by Redis again; returns the wait in ms. */
  static long recoveryMillis(RateLimiter limiter) {
    long start = System.nanoTime();
    long until = start + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < until) {
      if (!limiter.check(GUARDED, Identity.ip("10.9.9.9")).degraded()) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      }
      RedisProcess.pause(5);
    }
    return Long.MAX_VALUE;
  }

  /** {@code n} checks of the deny rule: each degraded, refused, and back within the deadline. */
  private static void assertDeniedInTime(RateLimiter limiter, int n) {
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      Decision d = limiter.check(GUARDED, Identity.ip("10.0.0.1"));
      assertThat(System.nanoTime() - start).isLessThan(
          TimeUnit.MILLISECONDS.toNanos(DEADLINE_MS + SLACK_MS));
      assertThat(d.degraded()).isTrue();
      assertThat(d.allowed()).isFalse();
    }
  }
}
