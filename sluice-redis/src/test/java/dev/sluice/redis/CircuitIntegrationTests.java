package dev.sluice.redis;

import dev.sluice.core.Circuit;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Issue 7's circuit, against real servers: noise never opens it, a dead server opens it within
 * its window, and decisions resume within 1 s of Redis answering again.
 *
 * <p>The load test doubles as the measurement behind the defaults (it prints what the breaker
 * saw); run it heavier with {@code -Dsluice.load.threads=1024 -Dsluice.load.seconds=20}.
 */
class CircuitIntegrationTests {

  private static final Rule OPEN = Rule.builder("open")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .onStoreError(OnStoreError.ALLOW).build();
  private static final Rule GUARDED = Rule.builder("guarded")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .onStoreError(OnStoreError.DENY).build();
  private static final Rule TWO_LIMITS = Rule.builder("two")
      .limit(Limit.slidingWindow("w", 1_000_000, Duration.ofSeconds(1)))
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .onStoreError(OnStoreError.DENY).build();

  private static final long WINDOW_MS = Circuit.defaults().window().toMillis();

  private final Heard heard = new Heard();

  private LettuceStore store(String uri) {
    return (LettuceStore) RedisStore.builder().uri(uri).keyPrefix(Stores.uniquePrefix("circuit"))
        .listener(heard).awaitConnected(Duration.ofSeconds(15)).build();
  }

  /**
   * Issue 7: 32 clients against a healthy Redis on 2 cores opened the old circuit twice. Here:
   * 128 callers for 5 s, twice the 64 at which this 2-vCPU machine reaches its most decisions
   * per second (about 30,000), on the fast path and the general script, from a cold store.
   * More callers only wait in line: past 256, Little's law puts them beyond the 50 ms deadline
   * (sluice-redis/README.md has those runs).
   */
  @Test
  void issue7_healthyRedis_underTheHeaviestLoad_neverOpensTheCircuit() throws Exception {
    int threads = Integer.getInteger("sluice.load.threads", 128);
    long seconds = Long.getLong("sluice.load.seconds", 5);
    // -Dsluice.load.judge=false: the breaker counts but never opens (to measure the noise)
    Circuit circuit = Boolean.parseBoolean(System.getProperty("sluice.load.judge",
        "true")) ? Circuit.defaults()
        : Circuit.builder().minimumCalls(1_000_000).build();
    try (RedisProcess redis = RedisProcess.start();
        LettuceStore store = (LettuceStore) RedisStore.builder().uri(redis.uri())
            .keyPrefix(Stores.uniquePrefix("load")).circuitBreaker(circuit).listener(heard)
            .awaitConnected(Duration.ofSeconds(15)).build()) {
      RateLimiter limiter = RateLimiter.of(store);
      LongAdder decisions = new LongAdder();
      LongAdder degraded = new LongAdder();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          ThreadLocalRandom r = ThreadLocalRandom.current();
          while (System.nanoTime() < until) {
            Rule rule = r.nextInt(4) == 0 ? TWO_LIMITS : GUARDED;
            if (limiter.check(rule, Identity.ip("10.0." + r.nextInt(256) + ".1")).degraded()) {
              degraded.increment();
              // A request goes on after its decision; without this a degraded answer, which
              // is instant, would turn the caller into a spin that starves the store's own
              // I/O thread on 2 vCPUs and measure only the spin.
              RedisProcess.pause(1);
            }
            decisions.increment();
          }
        }));
      }
      for (Future<?> f : done) {
        f.get(seconds + 60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      long[] totals = store.breaker().totals();
      System.out.printf("circuit under load: %d threads, %d s: %d decisions (%d/s), %d degraded;"
          + " the breaker saw %d failed and %d slow (>= 50 ms) calls; highest share in a judged"
          + " window: %.1f %% failed, %.1f %% slow; circuit opened %d times%n", threads, seconds,
          decisions.sum(), decisions.sum() / seconds, degraded.sum(), totals[0], totals[1],
          totals[2] / 10.0, totals[3] / 10.0, heard.count(RedisStore.Event.CIRCUIT_OPENED));
      assertThat(heard.count(RedisStore.Event.CIRCUIT_OPENED)).as("circuit openings").isZero();
    }
  }

  /** Issue 7: a cold 64-thread burst had 2,404 of 2,560 decisions degraded. */
  @Test
  void issue7_coldBurstOf64Threads_isServed_notDegraded() throws Exception {
    try (RedisProcess redis = RedisProcess.start(); LettuceStore store = store(redis.uri())) {
      RateLimiter limiter = RateLimiter.of(store);
      LongAdder degraded = new LongAdder();
      CountDownLatch go = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(64);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 64; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          go.await();
          for (int i = 0; i < 40; i++) {
            if (limiter.check(OPEN, Identity.ip("10.1." + thread + "." + i)).degraded()) {
              degraded.increment();
            }
          }
          return null;
        }));
      }
      long start = System.nanoTime();
      go.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      System.out.printf("cold burst: 64 threads x 40 decisions in %d ms, %d degraded%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), degraded.sum());
      assertThat(heard.count(RedisStore.Event.CIRCUIT_OPENED)).as("circuit openings").isZero();
      // Single late answers can still miss the 50 ms deadline on a starved 2-vCPU machine.
      assertThat(degraded.sum()).as("degraded of 2,560").isLessThan(2560 / 20);
    }
  }

  @Test
  void killed_opensWithinItsWindow() {
    try (RedisProcess redis = RedisProcess.start(); LettuceStore store = store(redis.uri())) {
      RateLimiter limiter = RateLimiter.of(store);
      serveAWindow(store, limiter);
      redis.kill();
      long killed = System.nanoTime();
      while (heard.count(RedisStore.Event.CIRCUIT_OPENED) == 0
          && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(5)) {
        assertThat(limiter.check(GUARDED, Identity.ip("10.0.0.1")).allowed()).isFalse();
      }
      System.out.printf("killed: circuit opened %d ms after the kill%n", millisUntilOpened(killed));
      assertThat(millisUntilOpened(killed)).as("ms from kill until the circuit opened")
          .isLessThan(WINDOW_MS);
    }
  }

  @Test
  void sigstopped_opensWithinItsWindow_everyCallTimingOut() throws Exception {
    try (RedisProcess redis = RedisProcess.start(); LettuceStore store = store(redis.uri())) {
      RateLimiter limiter = RateLimiter.of(store);
      serveAWindow(store, limiter);
      redis.suspend();
      long stopped = System.nanoTime();
      try {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
          done.add(pool.submit(() -> {
            while (heard.count(RedisStore.Event.CIRCUIT_OPENED) == 0
                && System.nanoTime() - stopped < TimeUnit.SECONDS.toNanos(5)) {
              limiter.check(GUARDED, Identity.ip("10.0.0.2"));
            }
          }));
        }
        for (Future<?> f : done) {
          f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        // the first timeouts come one deadline after the stop; then within the window
        System.out.printf("sigstopped: circuit opened %d ms after SIGSTOP%n",
            millisUntilOpened(stopped));
        assertThat(millisUntilOpened(stopped)).as("ms from SIGSTOP until the circuit opened")
            .isLessThan(WINDOW_MS + 50 + 150);
      } finally {
        redis.resume();
      }
    }
  }

  /**
   * Serves decisions until the circuit's window has seen a full window: a store in use. (One
   * of them may still miss the deadline on a loaded machine: that is noise, not the test.)
   */
  private static void serveAWindow(LettuceStore store, RateLimiter limiter) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!store.breaker().judging() && System.nanoTime() < until) {
      limiter.check(GUARDED, Identity.ip("10.0.0.1"));
    }
    assertThat(store.breaker().judging()).isTrue();
  }

  /**
   * Until a decision is served (not degraded): the first ones after start-up may miss the 50 ms
   * deadline on a loaded machine (CI failed so once); what the tests measure comes after.
   */
  private static void awaitServed(RateLimiter limiter) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (limiter.check(GUARDED, Identity.ip("10.0.0.1")).degraded()) {
      assertThat(System.nanoTime()).as("a decision served by the fresh Redis within 15 s")
          .isLessThan(until);
      RedisProcess.pause(10);   // polling an eventual condition with a deadline, not timing
    }
  }

  private long millisUntilOpened(long since) {
    return heard.all().stream().filter(h -> h.event() == RedisStore.Event.CIRCUIT_OPENED)
        .mapToLong(h -> TimeUnit.NANOSECONDS.toMillis(h.nanos() - since)).findFirst()
        .orElse(Long.MAX_VALUE);
  }

  @Test
  void killedAndRestarted_servedWithinOneSecondOfRedisAnswering() {
    try (RedisProcess redis = RedisProcess.start(); LettuceStore store = store(redis.uri())) {
      RateLimiter limiter = RateLimiter.of(store);
      awaitServed(limiter);
      redis.kill();
      keepCallingUntilReopened(limiter);
      redis.restart();
      long ms = FailureIntegrationTests.recoveryMillis(limiter);
      System.out.printf("killed and restarted: served %d ms after Redis answered%n", ms);
      assertThat(ms).as("ms from Redis answering PING until decisions are served")
          .isLessThan(1000);
    }
  }

  @Test
  void sigstoppedAndResumed_servedWithinOneSecondOfRedisAnswering() {
    try (RedisProcess redis = RedisProcess.start(); LettuceStore store = store(redis.uri())) {
      RateLimiter limiter = RateLimiter.of(store);
      awaitServed(limiter);
      redis.suspend();
      try {
        keepCallingUntilReopened(limiter);
      } finally {
        redis.resume();
      }
      long ms = FailureIntegrationTests.recoveryMillis(limiter);
      System.out.printf("sigstopped and resumed: served %d ms after SIGCONT%n", ms);
      assertThat(ms).as("ms from SIGCONT until decisions are served").isLessThan(1000);
    }
  }

  /**
   * Decisions from 16 callers until the circuit has opened twice (so one round of probes failed
   * too: a real outage, not a blip), paced by 1 ms so fail-fast calls do not take the CPU.
   */
  private void keepCallingUntilReopened(RateLimiter limiter) {
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      threads.add(new Thread(() -> {
        while (!stop.get()) {
          limiter.check(GUARDED, Identity.ip("10.0.0.3"));
          RedisProcess.pause(1);
        }
      }));
    }
    threads.forEach(Thread::start);
    boolean reopened = heard.await(RedisStore.Event.CIRCUIT_OPENED, 2);
    stop.set(true);
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
    assertThat(reopened).as("the circuit opened, probed and opened again").isTrue();
  }
}
