package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ContentionTest {

 private final FakeTicker ticker = new FakeTicker();


 private static int run(int threads, int perThread, java.util.function.BooleanSupplier call)
   throws Exception {
  ExecutorService pool = Executors.newFixedThreadPool(threads);
  CountDownLatch start = new CountDownLatch(1);
  AtomicInteger admitted = new AtomicInteger();
  try {
   Future<?>[] futures = new Future<?>[threads];
   for (int t = 0; t < threads; t++) {
    futures[t] = pool.submit(() -> {
     start.await();
     for (int i = 0; i < perThread; i++) {
      if (call.getAsBoolean()) {
       admitted.incrementAndGet();
      }
     }
     return null;
    });
   }
   start.countDown();
   for (Future<?> f : futures) {
    f.get(60, TimeUnit.SECONDS);
   }
  } finally {
   pool.shutdownNow();
  }
  return admitted.get();
 }

 @Test
 void sixtyFourThreads_oneKeyOfCapacity1000_admitExactly1000() throws Exception {
  for (Limit limit : List.of(
    Limit.tokenBucket("tb", 1000, 1, Duration.ofDays(1)),
    Limit.fixedWindow("fw", 1000, Duration.ofDays(1)),
    Limit.slidingWindow("sw", 1000, Duration.ofDays(1)),
    Limit.slidingLog("log", 1000, Duration.ofDays(1)),
    Limit.score("score", 1000, 1, Duration.ofDays(1)))) {
   Rule rule = Rule.builder("hot").limit(limit).build();
   RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1000));
   Identity who = Identity.ip("192.0.2.1");
   int admitted = run(64, 100, () -> limiter.check(rule, who).allowed());
   assertThat(admitted).as(limit.toString()).isEqualTo(1000);
  }
 }

 @Test
 void atomicMultiRuleChecks_underContention_neverConsumeOnRefusal() throws Exception {
  // Each of 8 sessions may make 100 calls; the shared IP allows 500. All 64 threads share the
  // IP; 8 threads per session. Exactly 500 pass, and no session is charged for a refusal:
  // afterwards, each session's own count equals what it was admitted.
  Rule ip = Rule.builder("ip").key("ip").limit(Limit.fixedWindow("ip", 500,
    Duration.ofDays(1))).build();
  Rule session = Rule.builder("session").key("session").limit(Limit.fixedWindow("s", 100,
    Duration.ofDays(1))).build();
  RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1000));
  AtomicInteger next = new AtomicInteger();
  AtomicInteger[] perSession = new AtomicInteger[8];
  for (int i = 0; i < 8; i++) {
   perSession[i] = new AtomicInteger();
  }
  ThreadLocal<Integer> mine = ThreadLocal.withInitial(() -> next.getAndIncrement() % 8);
  int admitted = run(64, 50, () -> {
   int s = mine.get();
   Identity who = Identity.ip("192.0.2.1").with("session", "s" + s);
   boolean ok = limiter.check(List.of(session, ip), who, 1).allowed();
   if (ok) {
    perSession[s].incrementAndGet();
   }
   return ok;
  });
  assertThat(admitted).isEqualTo(500);
  for (int s = 0; s < 8; s++) {
   Identity who = Identity.ip("192.0.2.1").with("session", "s" + s);
   long remaining = 100 - perSession[s].get();
   int more = 0;
   while (limiter.check(session, who).allowed()) {
    more++;
   }
   assertThat(more).as("session s%d was charged only for admitted calls", s)
     .isEqualTo(remaining);
  }
 }
}
