package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.address.ClientAddress;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The in-memory store's open-addressed tables: every layout, growth, sweeps, concurrency. */
class MemoryTableTest {

  /** One-long state: compare-and-set. */
  private static final Rule BUCKET = Rule.builder("bucket")
      .limit(Limit.tokenBucket("b", 2, 1, Duration.ofDays(1))).build();
  /** Guarded inline state. */
  private static final Rule WINDOW = Rule.builder("window")
      .limit(Limit.fixedWindow("w", 2, Duration.ofHours(1))).build();
  /** 22 longs: a side array per key. */
  private static final Rule LOG = Rule.builder("log")
      .limit(Limit.slidingLog("l", 20, Duration.ofHours(1))).build();
  /** A ban: two longs, guarded. */
  private static final Rule BANNING = Rule.builder("banning")
      .limit(Limit.tokenBucket("b", 2, 1, Duration.ofDays(1))).ban(Duration.ofHours(1)).build();

  private final FakeTicker ticker = new FakeTicker();

  private static Identity ip(int i) {
    return Identity.ip(ClientAddress.ipv4(0x0A00_0000 | i));
  }

  @Test
  void everyLayout_keepsEachKeysState_throughGrowth_andSweepsWhenFresh() {
    Store store = Store.memory(ticker, 1_000_000);
    RateLimiter limiter = RateLimiter.of(store);
    int keys = 20_000;
    for (Rule rule : List.of(BUCKET, WINDOW, BANNING)) {
      for (int i = 0; i < keys; i++) {
        assertThat(limiter.check(rule, ip(i)).allowed()).isTrue();
        assertThat(limiter.check(rule, ip(i)).allowed()).isTrue();
      }
    }
    for (int i = 0; i < 2_000; i++) {
      for (int j = 0; j < 20; j++) {
        limiter.check(LOG, ip(i));
      }
    }
    assertThat(store.size()).isEqualTo(3 * keys + 2_000);
    for (int i = 0; i < keys; i += 7) {
      assertThat(limiter.check(BUCKET, ip(i)).allowed()).as("bucket %d", i).isFalse();
      assertThat(limiter.check(WINDOW, ip(i)).allowed()).as("window %d", i).isFalse();
      assertThat(limiter.check(BANNING, ip(i)).banApplied()).as("ban %d", i).isTrue();
    }
    for (int i = 0; i < 2_000; i += 7) {
      assertThat(limiter.check(LOG, ip(i)).allowed()).as("log %d", i).isFalse();
    }
    ticker.advance(Duration.ofDays(3));
    // Everything is fresh now; the fresh sweep runs after another 50,000 new keys at most.
    for (int i = 0; i < 50_000; i++) {
      limiter.check(WINDOW, ip(100_000 + i));
    }
    assertThat(store.size()).as("only keys checked since the sweep").isEqualTo(50_000);
    assertThat(limiter.check(BUCKET, ip(0)).remaining()).as("a swept key starts fresh")
        .isEqualTo(1);
  }

  @Test
  void concurrentChecks_admitExactlyTheLimit_whileTheTablesGrowAndShrink() throws Exception {
    Store store = Store.memory(System::nanoTime, 200_000);
    RateLimiter limiter = RateLimiter.of(store);
    Rule bucket = Rule.builder("hot-bucket")
        .limit(Limit.tokenBucket("b", 100, 1, Duration.ofDays(1))).build();
    Rule window = Rule.builder("hot-window")
        .limit(Limit.fixedWindow("w", 150, Duration.ofDays(1))).build();
    int hot = 64;
    int threads = 4;
    ConcurrentHashMap<String, AtomicInteger> allowed = new ConcurrentHashMap<>();
    AtomicInteger fresh = new AtomicInteger(1_000_000);
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int seed = t;
      Thread w = new Thread(() -> {
        java.util.Random rnd = new java.util.Random(seed);
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int n = 0; n < 20_000; n++) {
          Identity who = ip(rnd.nextInt(hot));
          String kind = n % 3 == 0 ? "both" : n % 3 == 1 ? "bucket" : "window";
          List<Rule> rules = kind.equals("both") ? List.of(bucket, window)
              : kind.equals("bucket") ? List.of(bucket) : List.of(window);
          Decision d = limiter.check(rules, who, 1);
          if (d.allowed()) {
            if (!kind.equals("window")) {
              allowed.computeIfAbsent("bucket" + who, k -> new AtomicInteger()).incrementAndGet();
            }
            if (!kind.equals("bucket")) {
              allowed.computeIfAbsent("window" + who, k -> new AtomicInteger()).incrementAndGet();
            }
          }
          // New keys force segments to grow and sweeps to rehash them under the checks.
          limiter.check(window, ip(fresh.incrementAndGet()));
        }
      });
      w.start();
      workers.add(w);
    }
    start.countDown();
    for (Thread w : workers) {
      w.join();
    }
    for (int i = 0; i < hot; i++) {
      assertThat(allowed.get("bucket" + ip(i)).get()).as("bucket of key %d", i).isEqualTo(100);
      assertThat(allowed.get("window" + ip(i)).get()).as("window of key %d", i).isEqualTo(150);
    }
  }

  @Test
  void aRuleListedTwice_isDecidedTwiceOnOneState_withoutDeadlock() {
    RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 100));
    Decision d = limiter.check(List.of(WINDOW, WINDOW), ip(1), 1);
    assertThat(d.allowed()).isTrue();
    assertThat(limiter.check(WINDOW, ip(1)).allowed()).as("both consumed").isFalse();
  }

  @Test
  void textAndAddressIdentities_shareTheirBucket() {
    RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 100));
    assertThat(limiter.check(WINDOW, Identity.ip("203.0.113.7")).remaining()).isEqualTo(1);
    assertThat(limiter.check(WINDOW, Identity.ip(ClientAddress.ipv4(0xCB00_7107))).remaining())
        .isEqualTo(0);
    ClientAddress net = ClientAddress.ipv6(0x2001_0db8_0001_0002L, 0, 64);
    assertThat(limiter.check(WINDOW, Identity.ip(net)).remaining()).isEqualTo(1);
    assertThat(limiter.check(WINDOW, Identity.ip("2001:db8:1:2::/64")).remaining()).isEqualTo(0);
    assertThat(limiter.check(WINDOW, Identity.ip("2001:DB8:1:2::/64")).remaining())
        .as("other text, other key, as in Redis").isEqualTo(1);
    assertThat(limiter.check(WINDOW, Identity.ip(ClientAddress.unknown("unknown"))).remaining())
        .isEqualTo(1);
    assertThat(limiter.check(WINDOW, Identity.ip("unknown")).remaining()).isEqualTo(0);
  }

  @Test
  void dimensionsDoNotRunTogether() {
    Rule pair = Rule.builder("pair").key("user:session")
        .limit(Limit.fixedWindow("w", 1, Duration.ofHours(1))).build();
    RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 100));
    Identity ab = Identity.empty().with("user", "ab").with("session", "c");
    Identity a = Identity.empty().with("user", "a").with("session", "bc");
    Identity missing = Identity.empty().with("user", "ab");
    Identity blank = Identity.empty().with("user", "ab").with("session", " ");
    assertThat(limiter.check(pair, ab).allowed()).isTrue();
    assertThat(limiter.check(pair, a).allowed()).isTrue();
    assertThat(limiter.check(pair, missing).allowed()).isTrue();
    assertThat(limiter.check(pair, blank).allowed()).as("blank is missing: the shared bucket")
        .isFalse();
  }

  /**
   * New keys raced by many threads at once: each key is inserted once (one slot, one state), so
   * each admits exactly its limit however many threads met it first, through the segment locks
   * and the growth they guard; the store counts every key once. Eight threads take the same
   * 3,000 new keys in the same order, each check hitting both a bucket and a window (2 each).
   */
  @Test
  void newKeysRacedByManyThreads_areInsertedOnce() throws Exception {
    RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1_000_000));
    int keys = 3_000;
    int threads = 8;
    AtomicInteger[] allowed = new AtomicInteger[keys];
    for (int i = 0; i < keys; i++) {
      allowed[i] = new AtomicInteger();
    }
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < keys; i++) {
          if (limiter.check(List.of(BUCKET, WINDOW), ip(i), 1).allowed()) {
            allowed[i].incrementAndGet();
          }
        }
      });
      w.start();
      workers.add(w);
    }
    start.countDown();
    for (Thread w : workers) {
      w.join();
    }
    for (int i = 0; i < keys; i++) {
      assertThat(allowed[i].get()).as("key %d", i).isEqualTo(2);
    }
    assertThat(limiter.store().size()).isEqualTo(2L * keys);
  }

  /**
   * Regression (issue 7): the token bucket read the time before taking its key, so under
   * contention a later decision could report the same "remaining" as an earlier one.
   */
  @Test
  void remaining_neverRepeats_underContention() throws Exception {
    AtomicLong clock = new AtomicLong();
    RateLimiter limiter = RateLimiter.of(Store.memory(clock::incrementAndGet, 100));
    Rule rule = Rule.builder("r")
        .limit(Limit.tokenBucket("b", 40_000, 1_000, Duration.ofDays(1))).build();
    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicInteger repeats = new AtomicInteger();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread w = new Thread(() -> {
        for (int n = 0; n < 10_000; n++) {
          Decision d = limiter.check(rule, ip(1));
          if (d.allowed() && !seen.add(d.remaining())) {
            repeats.incrementAndGet();
          }
        }
      });
      w.start();
      workers.add(w);
    }
    for (Thread w : workers) {
      w.join();
    }
    assertThat(repeats.get()).isZero();
    assertThat(seen).hasSize(40_000);
  }

  @Test
  void tokenBucketFastPath_decidesExactlyLikeTheGeneralPath() {
    FakeTicker clock = new FakeTicker();
    RateLimiter fast = RateLimiter.of(Store.memory(clock, 1000));
    RateLimiter general = RateLimiter.of(Store.memory(clock, 1000));
    Rule enforce = Rule.builder("b").limit(Limit.tokenBucket("t", 5, 3, Duration.ofSeconds(2)))
        .build();
    Rule shadow = enforce.toBuilder().mode(Mode.SHADOW).build();
    java.util.Random rnd = new java.util.Random(7);
    MutableDecision into = new MutableDecision();
    for (int step = 0; step < 5_000; step++) {
      clock.advance(Duration.ofMillis(rnd.nextInt(400)));
      Rule rule = rnd.nextBoolean() ? enforce : shadow;
      Identity who = ip(rnd.nextInt(3));
      long cost = 1 + rnd.nextInt(3);
      fast.check(rule, who, cost, into);
      Decision expected = general.check(List.of(rule), who, cost);
      assertThat(into.snapshot()).as("step %d", step).usingRecursiveComparison()
          .withEqualsForType((x, y) -> Double.compare(x, y) == 0, Double.class)
          .isEqualTo(expected);
    }
  }

  /**
   * Steady state, once compiled: until the JIT has compiled the path, VarHandle calls made by the
   * interpreter allocate, so the test measures rounds until one allocates nothing (or fails after
   * 100 rounds).
   */
  @Test
  void oneRuleCheck_intoAReusedDecision_allocatesNothing() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1000));
    Identity who = Identity.ip(ClientAddress.ipv4(0xCB00_7107));
    Identity text = Identity.ip("203.0.113.8");
    Rule big = Rule.builder("big")
        .limit(Limit.tokenBucket("b", 1_000_000, 1_000, Duration.ofDays(1))).build();
    MutableDecision d = new MutableDecision();
    Set<Boolean> outcomes = new HashSet<>();
    long id = Thread.currentThread().getId();
    for (Rule rule : List.of(big, WINDOW)) {
      long least = Long.MAX_VALUE;
      for (int round = 0; round < 100 && least > 0; round++) {
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 10_000; i++) {
          outcomes.add(limiter.check(rule, who, 1, d));
          limiter.check(rule, text, 1, d);
        }
        least = Math.min(least, threads.getThreadAllocatedBytes(id) - before);
      }
      assertThat(least).as("bytes for 20,000 checks of %s", rule.name()).isZero();
    }
    assertThat(outcomes).as("allowed (big bucket) and refused (window) paths").hasSize(2);
  }
}
