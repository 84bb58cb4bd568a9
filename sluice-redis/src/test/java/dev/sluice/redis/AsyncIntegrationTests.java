package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Ticker;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 9: the store is asynchronous underneath. A call returns before Redis answers, a stopped
 * Redis fails it at the deadline, at most {@code maxInFlight} calls wait, and a fallback answers
 * on the same stage. Each test that breaks Redis runs its own server.
 */
class AsyncIntegrationTests {

  /** Scheduling and GC noise on a small shared test machine (2 CPUs). */
  private static final long SLACK_MS = 400;

  private static final Rule GUARDED = Rule.builder("guarded")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .onStoreError(OnStoreError.DENY).build();

  private static RedisStore.Builder builder(String uri, String name, Duration deadline) {
    return RedisStore.builder().uri(uri).keyPrefix(Stores.uniquePrefix(name)).deadline(deadline)
        .awaitConnected(Duration.ofSeconds(15));
  }

  private static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  @Test
  void sigstop_evaluateAsync_returnsAtOnce_andFailsAtTheDeadline() throws Exception {
    long deadlineMs = 500;
    try (RedisProcess redis = RedisProcess.start();
        Store store = builder(redis.uri(), "stop", Duration.ofMillis(deadlineMs)).build()) {
      RateLimiter limiter = RateLimiter.of(store);
      assertThat(limiter.check(GUARDED, Identity.ip("10.0.0.1")).degraded()).isFalse();
      redis.suspend();
      try {
        long start = System.nanoTime();
        CompletableFuture<Verdicts> stage = store.evaluateAsync(List.of(GUARDED),
            Identity.ip("10.0.0.1"), 1, new Verdicts()).toCompletableFuture();
        CompletableFuture<Decision> decision = limiter.checkAsync(List.of(GUARDED),
            Identity.ip("10.0.0.2"), 1).toCompletableFuture();
        long returned = millisSince(start);
        assertThat(stage).as("pending on the stopped Redis").isNotDone();
        assertThat(decision).isNotDone();
        // Well below the deadline: the calls return; only their stages wait.
        assertThat(returned).as("ms for both calls to return").isLessThan(deadlineMs / 5);

        Throwable failure = catchFailure(stage);
        long failedAt = millisSince(start);
        assertThat(failure).isInstanceOf(StoreException.class)
            .hasMessageContaining("no answer from " + redis.uri() + " within 500 ms");
        assertThat(failedAt).as("ms until the stage failed").isBetween(deadlineMs - 5,
            deadlineMs + SLACK_MS);
        Decision d = decision.get(5, TimeUnit.SECONDS);
        assertThat(d.degraded()).isTrue();
        assertThat(d.allowed()).as("the rule's onStoreError: DENY").isFalse();
      } finally {
        redis.resume();
      }
    }
  }

  /**
   * 50 calls at once on a stopped Redis with room for 8: 8 wait, 42 fail before the call
   * returns. Once Redis resumes, the 8 answer in whatever order they come, exactly: a window
   * of 5 allows 5 of them, and so does a bucket of 5 (the batched path, its own bookkeeping).
   */
  @ParameterizedTest
  @ValueSource(strings = {"window", "bucket"})
  void inFlightBound_atMostMaxInFlightWait_theRestFailAtOnce_answersInAnyOrder(String kind)
      throws Exception {
    Rule five = Rule.builder("five").limit(kind.equals("window")
        ? Limit.fixedWindow("w", 5, Duration.ofHours(1))
        : Limit.tokenBucket("b", 5, 1, Duration.ofHours(1))).build();
    try (RedisProcess redis = RedisProcess.start();
        Store store = builder(redis.uri(), "bound", Duration.ofSeconds(5)).maxInFlight(8)
            .build()) {
      redis.suspend();
      List<CompletableFuture<Verdicts>> stages = new ArrayList<>();
      try {
        for (int i = 0; i < 50; i++) {
          stages.add(store.evaluateAsync(List.of(five), Identity.ip("192.0.2.9"), 1,
              new Verdicts()).toCompletableFuture());
        }
        List<CompletableFuture<Verdicts>> failed = stages.stream()
            .filter(CompletableFuture::isCompletedExceptionally).toList();
        assertThat(stages.stream().filter(f -> !f.isDone())).as("waiting on Redis").hasSize(8);
        assertThat(failed).hasSize(42);
        assertThat(catchFailure(failed.get(0))).isInstanceOf(StoreException.class)
            .hasMessageContaining("8 calls already waiting");
      } finally {
        redis.resume();
      }
      AtomicInteger allowed = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      List<CompletableFuture<Void>> answers = new ArrayList<>();
      for (CompletableFuture<Verdicts> f : stages) {
        if (!f.isCompletedExceptionally()) {
          answers.add(f.thenAccept(v -> (v.allowed(0) ? allowed : refused).incrementAndGet()));
        }
      }
      CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(10,
          TimeUnit.SECONDS);
      assertThat(allowed).hasValue(5);
      assertThat(refused).hasValue(3);
    }
  }

  /**
   * One thread keeps 64 checks in flight (the bound) over 200 keys with a window of 30 each:
   * 12,000 checks, every one answered by Redis, exactly 6,000 allowed.
   */
  @Test
  void oneThread_64InFlight_everyCheckAnswered_exactCounts() throws Exception {
    Rule thirty = Rule.builder("thirty").limit(Limit.fixedWindow("w", 30, Duration.ofHours(1)))
        .build();
    try (Store store = builder(Servers.standalone().uri(), "window", Duration.ofSeconds(2))
        .maxInFlight(64).build()) {
      RateLimiter limiter = RateLimiter.of(store);
      Semaphore window = new Semaphore(64);
      AtomicInteger allowed = new AtomicInteger();
      AtomicInteger degraded = new AtomicInteger();
      List<CompletableFuture<Decision>> all = new ArrayList<>();
      for (int i = 0; i < 12_000; i++) {
        window.acquire();
        all.add(limiter.checkAsync(List.of(thirty), Identity.ip("10.2.0." + i % 200), 1)
            .toCompletableFuture().whenComplete((d, e) -> {
              allowed.addAndGet(d.allowed() ? 1 : 0);
              degraded.addAndGet(d.degraded() ? 1 : 0);
              window.release();
            }));
      }
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      assertThat(degraded).hasValue(0);
      assertThat(allowed).hasValue(6_000);
    }
  }

  /**
   * 2,000 token-bucket decisions at once on 50 keys and two rule shapes (one at cost 2): they
   * leave in a few batched calls, and every key ends exactly as if they had run one at a time:
   * 20 allowed on the burst-20 rule with remaining 19..0 once each, 3 on the burst-7 rule at
   * cost 2.
   */
  @Test
  void concurrentTokenBucketDecisions_batched_answerAsIfOneAtATime() throws Exception {
    Rule twenty = Rule.builder("twenty")
        .limit(Limit.tokenBucket("b", 20, 1, Duration.ofHours(1))).build();
    Rule seven = Rule.builder("seven")
        .limit(Limit.tokenBucket("b", 7, 1, Duration.ofHours(1))).build();
    RedisProcess redis = Servers.standalone();
    try (Store store = builder(redis.uri(), "batch", Duration.ofSeconds(5)).maxInFlight(4096)
        .refusalCacheSize(0).build()) {
      long callsBefore = redis.scriptCalls();
      List<CompletableFuture<Verdicts>> twenties = new ArrayList<>();
      List<CompletableFuture<Verdicts>> sevens = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        Identity who = Identity.ip("10.5.0." + i % 50);
        twenties.add(store.evaluateAsync(List.of(twenty), who, 1, new Verdicts())
            .toCompletableFuture());
        sevens.add(store.evaluateAsync(List.of(seven), who, 2, new Verdicts())
            .toCompletableFuture());
      }
      List<List<Long>> remaining = new ArrayList<>();
      int[] sevenAllowed = new int[50];
      for (int k = 0; k < 50; k++) {
        remaining.add(new ArrayList<>());
      }
      for (int i = 0; i < 1000; i++) {
        Verdicts t = twenties.get(i).get(10, TimeUnit.SECONDS);
        Verdicts s = sevens.get(i).get(10, TimeUnit.SECONDS);
        if (t.allowed(0)) {
          remaining.get(i % 50).add(t.remaining(0));
        } else {
          assertThat(t.retryAfterNanos(0)).isPositive();
        }
        sevenAllowed[i % 50] += s.allowed(0) ? 1 : 0;
      }
      for (int k = 0; k < 50; k++) {
        assertThat(remaining.get(k)).as("key %d", k).hasSize(20)
            .containsExactlyInAnyOrderElementsOf(java.util.stream.LongStream.range(0, 20)
                .boxed().toList());
        assertThat(sevenAllowed[k]).as("key %d at cost 2", k).isEqualTo(3);
      }
      assertThat(redis.scriptCalls() - callsBefore - Stores.adminNotes(store))
          .as("calls for 2,000 decisions (admin notes apart)")
          .isLessThan(500);
    }
  }

  /**
   * The uniform batches (one rule, cost 1): 1,000 decisions on 50 keys, whose keys repeat
   * within a call, end as one at a time would (remaining 19..0 per key); 1,000 on distinct keys
   * are each a key's first.
   */
  @Test
  void uniformBatches_withAndWithoutRepeatedKeys_answerAsIfOneAtATime() throws Exception {
    Rule twenty = Rule.builder("twenty")
        .limit(Limit.tokenBucket("b", 20, 1, Duration.ofHours(1))).build();
    try (Store store = builder(Servers.standalone().uri(), "uniform", Duration.ofSeconds(5))
        .maxInFlight(4096).refusalCacheSize(0).build()) {
      List<CompletableFuture<Verdicts>> repeated = new ArrayList<>();
      List<CompletableFuture<Verdicts>> distinct = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        repeated.add(store.evaluateAsync(List.of(twenty), Identity.ip("10.6.0." + i % 50), 1,
            new Verdicts()).toCompletableFuture());
      }
      for (int i = 0; i < 1000; i++) {
        distinct.add(store.evaluateAsync(List.of(twenty), Identity.ip("10.7." + i / 250 + "."
            + i % 250), 1, new Verdicts()).toCompletableFuture());
      }
      List<List<Long>> remaining = new ArrayList<>();
      for (int k = 0; k < 50; k++) {
        remaining.add(new ArrayList<>());
      }
      for (int i = 0; i < 1000; i++) {
        Verdicts v = repeated.get(i).get(10, TimeUnit.SECONDS);
        if (v.allowed(0)) {
          remaining.get(i % 50).add(v.remaining(0));
        }
        Verdicts first = distinct.get(i).get(10, TimeUnit.SECONDS);
        assertThat(first.allowed(0)).isTrue();
        assertThat(first.remaining(0)).isEqualTo(19);
      }
      for (int k = 0; k < 50; k++) {
        assertThat(remaining.get(k)).as("key %d", k).containsExactlyInAnyOrderElementsOf(
            java.util.stream.LongStream.range(0, 20).boxed().toList());
      }
    }
  }

  @Test
  void fallback_answersDegraded_onTheSameStage_atTheDeadline() throws Exception {
    Rule three = Rule.builder("three").limit(Limit.fixedWindow("w", 3, Duration.ofHours(1)))
        .build();
    Cooldown login = Cooldown.builder("login").maxRetries(1).retryWindow(Duration.ofMinutes(1))
        .cooldown(Duration.ofMinutes(1)).maxCooldown(Duration.ofMinutes(5)).build();
    try (RedisProcess redis = RedisProcess.start();
        Store store = builder(redis.uri(), "fallback", Duration.ofMillis(500))
            .fallback(Store.memory(Ticker.system(), 1000)).build()) {
      redis.suspend();
      try {
        long start = System.nanoTime();
        List<CompletableFuture<Verdicts>> checks = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          checks.add(store.evaluateAsync(List.of(three), Identity.ip("10.3.0.1"), 1,
              new Verdicts()).toCompletableFuture());
        }
        CompletableFuture<Verdict> cooldown = store.cooldownAsync("login:u1", login,
            Cooldown.Event.FAILURE).toCompletableFuture();
        CompletableFuture<Long> lease = store.acquireAsync("ws:10.3.0.1", 1,
            Duration.ofMinutes(1).toNanos()).toCompletableFuture();
        // Not waiting for the 500 ms deadline: the calls return at once (400: a loaded machine).
        assertThat(millisSince(start)).as("ms for the calls to return").isLessThan(400);
        assertThat(checks).allMatch(f -> !f.isDone());

        int allowed = 0;
        for (CompletableFuture<Verdicts> f : checks) {
          Verdicts v = f.get(5, TimeUnit.SECONDS);
          assertThat(v.degraded()).as("answered by the fallback").isTrue();
          allowed += v.allowed(0) ? 1 : 0;
        }
        assertThat(millisSince(start)).as("ms until the fallback answered")
            .isBetween(495L, 500 + SLACK_MS);
        assertThat(allowed).as("the fallback still limits").isEqualTo(3);
        assertThat(cooldown.get(5, TimeUnit.SECONDS).degraded()).isTrue();
        assertThat(lease.get(5, TimeUnit.SECONDS)).as("a lease from the fallback").isPositive();
      } finally {
        redis.resume();
      }
    }
  }

  /**
   * A synchronous call made where the store's answers arrive (a continuation on Lettuce's I/O
   * thread) could only be answered by the thread it blocks: it fails at once, not after the
   * deadline, and the rate limiter turns that into the rule's degraded outcome.
   */
  @Test
  void syncCall_onTheStoresOwnThread_failsAtOnce_insteadOfWaitingForItself() throws Exception {
    try (RedisProcess redis = RedisProcess.start();
        Store store = builder(redis.uri(), "own", Duration.ofSeconds(2)).build()) {
      RateLimiter limiter = RateLimiter.of(store);
      AtomicReference<String> thread = new AtomicReference<>();
      AtomicReference<Decision> nested = new AtomicReference<>();
      AtomicReference<Long> nestedMs = new AtomicReference<>();
      CompletableFuture<Void> done;
      // Stopped, so the continuation is attached before the answer and runs where it lands.
      redis.suspend();
      try {
        done = limiter.checkAsync(List.of(GUARDED), Identity.ip("10.4.0.1"), 1).thenAccept(d -> {
          thread.set(Thread.currentThread().getName());
          long start = System.nanoTime();
          nested.set(limiter.check(GUARDED, Identity.ip("10.4.0.2")));
          nestedMs.set(millisSince(start));
        }).toCompletableFuture();
      } finally {
        redis.resume();
      }
      done.get(10, TimeUnit.SECONDS);
      assertThat(thread.get()).as("where answers complete").startsWith("lettuce-");
      assertThat(nestedMs.get()).as("ms the nested call took (deadline 2 s)").isLessThan(1000);
      assertThat(nested.get().degraded()).isTrue();
      assertThat(nested.get().allowed()).isFalse();
      assertThat(limiter.check(GUARDED, Identity.ip("10.4.0.2")).degraded())
          .as("the same call from the test's own thread").isFalse();
    }
  }

  private static Throwable catchFailure(CompletableFuture<?> f) throws InterruptedException {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("the stage did not complete within 10 s", e);
    }
    throw new AssertionError("the stage completed normally");
  }
}
