package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Identity;
import dev.sluice.core.Reservation;
import dev.sluice.core.Rule;
import dev.sluice.core.StatusSet;
import dev.sluice.core.Store;
import dev.sluice.core.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Reservations of rules counted on responses (reserve.lua, cooldown.lua's R) against the memory
 * store on random traces, and the guarantee across gateways: two stores on one Redis never hold
 * more than the limit between them, however many requests they admit at once.
 */
class ReservationIntegrationTests {

  private static final long TTL = Duration.ofSeconds(5).toNanos();

  @Test
  void standalone_agreesWithMemoryStore_onRandomReservations() {
    for (long seed = 1; seed <= 4; seed++) {
      replay(Servers.standalone().uri(), seed, 2000);
    }
  }

  @Test
  void cluster_agreesWithMemoryStore_onRandomReservations() {
    replay(Servers.cluster().uri(), 11, 1500);
  }

  private static void replay(String uri, long seed, int steps) {
    AtomicLong nanos = new AtomicLong();
    Store memory = Store.memory(nanos::get, 100_000);
    try (Store redis = Stores.connected(RedisStore.builder().uri(uri)
        .keyPrefix(Stores.uniquePrefix("reserve" + seed)).deadline(Duration.ofSeconds(5))
        .refusalCacheSize(0).pinnedClock(() -> nanos.get() / 1000).build())) {
      Random rnd = new Random(seed);
      List<Rule> rules = new ArrayList<>();
      for (int r = 0; r < 4; r++) {
        Rule random = DifferentialIntegrationTests.randomRule(rnd, "c" + r, r == 0,
            new int[] {0, 1, 2, 3, 4});
        rules.add(random.toBuilder().countStatus(StatusSet.of(List.of(401))).build());
      }
      rules.add(Rule.builder("cd").countStatus(StatusSet.of(List.of(404)))
          .cooldown(3, Duration.ofMillis(40), Duration.ofMillis(5), Duration.ofMillis(30))
          .key("user:ip").build());
      String[] users = {"alice", "bob"};
      // Held reservations: rule index, identity, cost, memory id, redis id.
      List<Object[]> held = new ArrayList<>();
      int counts = 0;
      int inFlight = 0;
      int refused = 0;
      for (int step = 0; step < steps; step++) {
        nanos.addAndGet(DifferentialIntegrationTests.gapMicros(rnd) * 1000L);
        String where = "seed " + seed + " step " + step + " t=" + nanos.get() / 1000 + "us";
        if (held.isEmpty() || rnd.nextInt(10) < 6) {
          int r = rnd.nextInt(rules.size());
          Rule rule = rules.get(r);
          Identity who = Identity.ip("10.0.0." + rnd.nextInt(2))
              .with("user", users[rnd.nextInt(users.length)]);
          long cost = rule.cooldown() != null ? 1 : 1 + rnd.nextInt((int) Math.min(2,
              rule.limits().stream().mapToLong(l -> l.capacity()).min().getAsLong()));
          Reservation m = memory.reserveAsync(rule, who, cost, TTL).toCompletableFuture().join();
          Reservation x = redis.reserveAsync(rule, who, cost, TTL).toCompletableFuture().join();
          String msg = where + " reserve " + rule + " " + who + " cost " + cost;
          assertThat(x.held()).as(msg).isEqualTo(m.held());
          assertThat(x.inFlight()).as(msg).isEqualTo(m.inFlight());
          DifferentialIntegrationTests.assertSame(m.verdict(), x.verdict(), msg);
          if (m.held()) {
            held.add(new Object[] {r, who, cost, m.id(), x.id()});
          } else if (m.inFlight()) {
            inFlight++;
          } else {
            refused++;
          }
        } else {
          Object[] h = held.remove(rnd.nextInt(held.size()));
          Rule rule = rules.get((Integer) h[0]);
          int pick = rnd.nextInt(10);
          Reservation.Settlement how = pick < 6 ? Reservation.Settlement.FAILURE
              : pick < 8 ? Reservation.Settlement.SUCCESS : Reservation.Settlement.NONE;
          Identity who = (Identity) h[1];
          long cost = (Long) h[2];
          Verdict m = memory.settleAsync(rule, who, (Long) h[3], cost, how)
              .toCompletableFuture().join();
          Verdict x = redis.settleAsync(rule, who, (Long) h[4], cost, how)
              .toCompletableFuture().join();
          DifferentialIntegrationTests.assertSame(m, x, where + " settle " + how + " " + rule);
          counts += how == Reservation.Settlement.FAILURE ? 1 : 0;
        }
      }
      // Agreeing on a trace that never refuses in flight or never counts proves little.
      assertThat(inFlight).as("in-flight refusals, seed " + seed).isGreaterThan(steps / 50);
      assertThat(refused).as("settled refusals, seed " + seed).isGreaterThan(2);
      assertThat(counts).as("failures counted, seed " + seed).isGreaterThan(steps / 10);
    }
  }

  /**
   * Two gateways on one Redis, each admitting 30 guesses at once from 8 threads against a
   * cooldown of 5: exactly 5 are held between them; after 5 failures the key is locked for both.
   */
  @Test
  void twoGateways_thirtyGuessesEachAtOnce_holdNoMoreThanTheLimit() throws Exception {
    String prefix = Stores.uniquePrefix("reserve-fleet");
    Rule invites = Rule.builder("invites").countStatus(StatusSet.of(List.of(404)))
        .cooldown(5, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofMinutes(10))
        .build();
    Identity who = Identity.ip("203.0.113.9");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (Store a = gateway(prefix); Store b = gateway(prefix)) {
      CountDownLatch go = new CountDownLatch(1);
      AtomicInteger admitted = new AtomicInteger();
      List<CompletableFuture<Reservation>> all = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        Store s = i % 2 == 0 ? a : b;
        all.add(CompletableFuture.supplyAsync(() -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
          Reservation r = s.reserveAsync(invites, who, 1, TTL).toCompletableFuture().join();
          if (r.held()) {
            admitted.incrementAndGet();
          }
          return r;
        }, pool));
      }
      go.countDown();
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      assertThat(admitted.get()).isEqualTo(5);
      for (CompletableFuture<Reservation> f : all) {
        Reservation r = f.join();
        if (r.held()) {
          a.settleAsync(invites, who, r.id(), 1, Reservation.Settlement.FAILURE)
              .toCompletableFuture().join();
        } else {
          assertThat(r.inFlight()).isTrue();
        }
      }
      Reservation locked = b.reserveAsync(invites, who, 1, TTL).toCompletableFuture().join();
      assertThat(locked.held()).isFalse();
      assertThat(locked.verdict().banned()).isTrue();
      assertThat(locked.verdict().retryAfterNanos()).isGreaterThan(Duration.ofSeconds(50)
          .toNanos());
    } finally {
      pool.shutdownNow();
    }
  }

  /** A crashed gateway's reservations lapse after their ttl: the share comes back. */
  @Test
  void aReservationNeverSettled_lapsesAfterItsTtl() {
    AtomicLong nanos = new AtomicLong();
    Rule login = Rule.builder("login").countStatus(StatusSet.of(List.of(401)))
        .limit(dev.sluice.core.Limit.slidingLog("login", 1, Duration.ofMinutes(15))).build();
    Identity who = Identity.ip("198.51.100.4");
    try (Store redis = Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(Stores.uniquePrefix("lapse")).deadline(Duration.ofSeconds(5))
        .pinnedClock(() -> nanos.get() / 1000).build())) {
      assertThat(redis.reserveAsync(login, who, 1, TTL).toCompletableFuture().join().held())
          .isTrue();
      Reservation second = redis.reserveAsync(login, who, 1, TTL).toCompletableFuture().join();
      assertThat(second.inFlight()).isTrue();
      nanos.addAndGet(TTL);
      assertThat(redis.reserveAsync(login, who, 1, TTL).toCompletableFuture().join().held())
          .isTrue();
    }
  }

  private static Store gateway(String prefix) {
    return Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(prefix).deadline(Duration.ofSeconds(5)).build());
  }
}
