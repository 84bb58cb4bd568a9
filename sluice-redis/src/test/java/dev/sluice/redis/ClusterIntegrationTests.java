package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import io.lettuce.core.cluster.SlotHash;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Redis Cluster: 3 masters, 3 replicas, started by the harness. */
class ClusterIntegrationTests {

  private static final Rule CHAT = Rule.builder("chat:send")
      .key("event:user:ip")
      .limit(Limit.slidingLog("window", 20, Duration.ofSeconds(10)))
      .limit(Limit.score("score", 10, 1, Duration.ofSeconds(2)))
      .limit(Limit.slidingWindow("minute", 30, Duration.ofMinutes(1)))
      .limit(Limit.tokenBucket("bucket", 15, 30, Duration.ofMinutes(1)))
      .ban(Duration.ofSeconds(30))
      .build();

  private static long crossSlotErrors(RedisCluster cluster) {
    long sum = 0;
    for (RedisProcess p : cluster.nodes) {
      String v = p.info("errorstats", "errorstat_CROSSSLOT");
      if (v != null) {
        sum += Long.parseLong(v.substring(v.indexOf('=') + 1));
      }
    }
    return sum;
  }

  /** Event loops are for a standalone server: a cluster store keeps its own threads, and works. */
  @Test
  void eventLoops_onACluster_keepTheStoresOwnConnection() {
    RedisCluster cluster = Servers.cluster();
    EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    try (Store store = Stores.connected(RedisStore.builder().uri(cluster.uri())
        .keyPrefix(Stores.uniquePrefix("loops")).eventLoops(loops)
        .deadline(Duration.ofSeconds(2)).build())) {
      assertThat(Stores.lettuce(store).lanes().size()).isEqualTo(1);
      Decision d = RateLimiter.of(store).check(CHAT, Identity.ip("10.7.0.1").with("user", "u")
          .with("event", "send"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.degraded()).isFalse();
    } finally {
      loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  void multiLimitRules_withBans_neverRaiseCrossSlot_andTakeOneScriptCallEach() {
    RedisCluster cluster = Servers.cluster();
    try (Store store = Stores.connected(RedisStore.builder().uri(cluster.uri())
        .keyPrefix(Stores.uniquePrefix("xslot")).refusalCacheSize(0)
        .deadline(Duration.ofSeconds(2)).build())) {
      RateLimiter limiter = RateLimiter.of(store);
      long errorsBefore = crossSlotErrors(cluster);
      long callsBefore = cluster.scriptCalls();
      int refused = 0;
      for (int i = 0; i < 1500; i++) {
        Identity id = Identity.ip("10.0." + (i % 20) + ".1").with("user", "u" + (i % 20))
            .with("event", "send");
        Decision d = limiter.check(CHAT, id);
        assertThat(d.degraded()).as("check %d", i).isFalse();
        refused += d.allowed() ? 0 : 1;
      }
      assertThat(refused).as("refusals (the rule must bite)").isPositive();
      assertThat(crossSlotErrors(cluster) - errorsBefore).isZero();
      // A fresh master may answer the first call with "function not found" while the library
      // loads in the background; that call is retried as EVALSHA (or EVAL): at most two extra
      // calls per master, once.
      assertThat(cluster.scriptCalls() - callsBefore - Stores.adminNotes(store))
          .as("one FCALL (or EVALSHA) per check, plus first loads (admin notes apart)").isBetween(1500L, 1506L);
    }
  }

  @Test
  void rulesKeyedOnTheSameIdentity_shareASlot_oneScriptCallPerCheck() {
    RedisCluster cluster = Servers.cluster();
    Rule route = Rule.builder("analysis").key("ip")
        .limit(Limit.tokenBucket("analysis", 15, 30, Duration.ofMinutes(1))).build();
    Rule backstop = Rule.builder("backstop").key("ip")
        .limit(Limit.fixedWindow("backstop", 600, Duration.ofMinutes(1))).build();
    try (Store store = Stores.connected(RedisStore.builder().uri(cluster.uri())
        .keyPrefix(Stores.uniquePrefix("sameid")).refusalCacheSize(0)
        .deadline(Duration.ofSeconds(2)).build())) {
      LettuceStore s = (LettuceStore) store;
      RateLimiter limiter = RateLimiter.of(store);
      long before = cluster.scriptCalls();
      for (int i = 0; i < 40; i++) {
        Identity id = Identity.ip("198.51.100." + i);
        assertThat(SlotHash.getSlot(s.keys().rule(route.keyFor(id))))
            .isEqualTo(SlotHash.getSlot(s.keys().rule(backstop.keyFor(id))));
        assertThat(limiter.check(List.of(route, backstop), id, 1).allowed()).isTrue();
      }
      assertThat(cluster.scriptCalls() - before - Stores.adminNotes(store))
          .as("one script call per check (+ first loads; admin notes apart)")
          .isBetween(40L, 46L);
    }
  }

  @Test
  void checkAcrossSlots_refusedByOneRule_consumesNothingInTheOther() {
    RedisCluster cluster = Servers.cluster();
    Rule perIp = Rule.builder("per-ip").key("ip")
        .limit(Limit.tokenBucket("bucket", 10, 1, Duration.ofHours(1)))
        .limit(Limit.slidingLog("log", 10, Duration.ofHours(1)))
        .limit(Limit.score("score", 10, 1, Duration.ofHours(1)))
        .build();
    Rule perUser = Rule.builder("per-user").key("user")
        .limit(Limit.fixedWindow("window", 3, Duration.ofHours(1))).build();
    try (Store store = Stores.connected(RedisStore.builder().uri(cluster.uri())
        .keyPrefix(Stores.uniquePrefix("refund")).refusalCacheSize(0)
        .deadline(Duration.ofSeconds(2)).build())) {
      LettuceStore s = (LettuceStore) store;
      Identity id = null;
      for (int i = 0; id == null; i++) {
        Identity candidate = Identity.ip("172.16.0." + i).with("user", "user" + i);
        if (SlotHash.getSlot(s.keys().rule(perIp.keyFor(candidate)))
            != SlotHash.getSlot(s.keys().rule(perUser.keyFor(candidate)))) {
          id = candidate;
        }
      }
      RateLimiter limiter = RateLimiter.of(store);
      long evalBefore = cluster.scriptCalls();
      for (int i = 0; i < 10; i++) {
        Decision d = limiter.check(List.of(perIp, perUser), id, 1);
        assertThat(d.degraded()).isFalse();
        assertThat(d.allowed()).as("check %d", i).isEqualTo(i < 3);
        if (i >= 3) {
          assertThat(d.rule()).isEqualTo("per-user");
        }
      }
      assertThat(cluster.scriptCalls() - evalBefore - Stores.adminNotes(store))
          .as("2 slot scripts per check + 1 refund per refused check (+ first loads)")
          .isBetween(20L + 7, 20L + 7 + 6);
      for (int i = 0; i < 7; i++) {
        Decision d = limiter.check(perIp, id);
        assertThat(d.allowed()).as("per-ip alone, call %d", i).isTrue();
        assertThat(d.remaining()).isEqualTo(6 - i);
      }
      assertThat(limiter.check(perIp, id).allowed()).isFalse();
    }
  }

  @Test
  void failoverUnderLoad_leavesNoCallPastTheDeadline() throws Exception {
    RedisCluster cluster = Servers.cluster();
    long deadlineMs = 50;
    try (Store store = Stores.connected(RedisStore.builder().uri(cluster.uri())
        .keyPrefix(Stores.uniquePrefix("failover")).deadline(Duration.ofMillis(deadlineMs))
        .build())) {
      RateLimiter limiter = RateLimiter.of(store);
      Rule rule = Rule.builder("load")
          .limit(Limit.tokenBucket("bucket", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
          .build();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong slowest = new AtomicLong();
      AtomicInteger calls = new AtomicInteger();
      AtomicInteger degraded = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          int i = 0;
          while (!stop.get()) {
            long start = System.nanoTime();
            Decision d = limiter.check(rule, Identity.ip("10." + thread + ".0." + (i++ % 200)));
            slowest.accumulateAndGet(System.nanoTime() - start, Math::max);
            calls.incrementAndGet();
            degraded.addAndGet(d.degraded() ? 1 : 0);
          }
        }));
      }
      while (calls.get() < 2000) {
        RedisProcess.pause(5);
      }
      RedisProcess replica = cluster.replicas().get(0);
      assertThat(replica.cmd("CLUSTER", "FAILOVER")).isEqualTo("+OK");
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!"master".equals(replica.info("replication", "role"))) {
        assertThat(System.nanoTime()).as("failover done within 20 s").isLessThan(until);
        RedisProcess.pause(10);
      }
      cluster.awaitHealthy();
      int after = calls.get();
      while (calls.get() < after + 2000) {
        RedisProcess.pause(5);
      }
      stop.set(true);
      for (Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
      pool.shutdown();
      // The slack covers scheduling on a small test machine (2 CPUs shared with 6 servers in
      // failover); a call hanging on the failed-over master would take seconds.
      assertThat(TimeUnit.NANOSECONDS.toMillis(slowest.get())).as("slowest call, ms")
          .isLessThanOrEqualTo(deadlineMs + 100);
      assertThat(FailureIntegrationTests.recoveryMillis(limiter)).isLessThan(5000);
      System.out.printf("failover: %d calls, %d degraded, slowest %d ms%n", calls.get(),
          degraded.get(), TimeUnit.NANOSECONDS.toMillis(slowest.get()));
    }
  }
}
