package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Store;
import dev.sluice.core.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Concurrency leases and escalating cooldowns, run as Lua in Redis. */
class LeaseCooldownIntegrationTests {

  private final AtomicLong nanos = new AtomicLong();

  private Store pinned(String name) {
    return Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(Stores.uniquePrefix(name)).deadline(Duration.ofSeconds(2))
        .pinnedClock(() -> nanos.get() / 1000).build());
  }

  @Test
  void cooldown_agreesWithMemoryStore_onRandomEvents() {
    Cooldown[] policies = {
        Cooldown.builder("invite").maxRetries(3).retryWindow(Duration.ofMillis(50))
            .cooldown(Duration.ofMillis(10)).maxCooldown(Duration.ofMillis(80)).build(),
        Cooldown.builder("login").maxRetries(1).retryWindow(Duration.ofMillis(5))
            .cooldown(Duration.ofMillis(1)).maxCooldown(Duration.ofMillis(3)).build()};
    Store memory = Store.memory(nanos::get, 10_000);
    Random rnd = new Random(42);
    int locks = 0;
    try (Store redis = pinned("cooldown")) {
      for (int step = 0; step < 3000; step++) {
        nanos.addAndGet(1000L * (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(8000)));
        Cooldown policy = policies[rnd.nextInt(policies.length)];
        String key = policy.name() + ":" + rnd.nextInt(3);
        int e = rnd.nextInt(10);
        Cooldown.Event event = e < 6 ? Cooldown.Event.FAILURE
            : e < 9 ? Cooldown.Event.CHECK : Cooldown.Event.SUCCESS;
        Verdict expected = memory.cooldown(key, policy, event);
        Verdict actual = redis.cooldown(key, policy, event);
        assertThat(actual).as("step %d %s %s at %d us", step, key, event, nanos.get() / 1000)
            .isEqualTo(expected);
        locks += actual.banApplied() ? 1 : 0;
      }
    }
    assertThat(locks).isGreaterThan(50);
  }

  @Test
  void leases_capConcurrentHolders_expireUnlessRenewed_andReleaseIdempotently() {
    try (Store store = pinned("lease")) {
      long ttl = Duration.ofSeconds(30).toNanos();
      List<Long> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        long id = store.acquire("ws:1.2.3.4", 3, ttl);
        assertThat(id).isPositive();
        held.add(id);
      }
      assertThat(store.acquire("ws:1.2.3.4", 3, ttl)).isZero();
      assertThat(store.leases("ws:1.2.3.4")).isEqualTo(3);

      store.release("ws:1.2.3.4", held.get(0));
      store.release("ws:1.2.3.4", held.get(0));
      assertThat(store.leases("ws:1.2.3.4")).isEqualTo(2);
      long replacement = store.acquire("ws:1.2.3.4", 3, ttl);
      assertThat(replacement).isPositive();

      nanos.addAndGet(Duration.ofSeconds(20).toNanos());
      assertThat(store.renew("ws:1.2.3.4", held.get(1), ttl)).isTrue();
      nanos.addAndGet(Duration.ofSeconds(15).toNanos());
      // held(2) and the replacement were taken at 0 s with 30 s to live; held(1) renewed to 50 s.
      assertThat(store.leases("ws:1.2.3.4")).isEqualTo(1);
      assertThat(store.renew("ws:1.2.3.4", held.get(2), ttl)).isFalse();
      assertThat(store.acquire("ws:1.2.3.4", 3, ttl)).isPositive();
      assertThat(store.acquire("ws:1.2.3.4", 3, ttl)).isPositive();
      assertThat(store.acquire("ws:1.2.3.4", 3, ttl)).isZero();
    }
  }

  @Test
  void leaseKey_carriesATtl_andDisappearsWithItsLastLease() {
    RedisProcess redis = Servers.standalone();
    String prefix = Stores.uniquePrefix("leasettl");
    try (Store store = Stores.connected(RedisStore.builder().uri(redis.uri())
        .keyPrefix(prefix).build())) {
      long id = store.acquire("job:7", 2, Duration.ofSeconds(10).toNanos());
      String key = redis.cmd("KEYS", prefix + "*");
      assertThat(key).isEqualTo(prefix + "job:{7}:z");
      long pttl = Long.parseLong(redis.cmd("PTTL", key).substring(1));
      assertThat(pttl).isBetween(9_000L, 11_000L);
      store.release("job:7", id);
      assertThat(redis.cmd("EXISTS", key)).isEqualTo(":0");
    }
  }

  @Test
  void twoClients_sharingLeases_grantExactlyTheCap() throws Exception {
    String prefix = Stores.uniquePrefix("leasecap");
    try (Store a = Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
        .keyPrefix(prefix).deadline(Duration.ofSeconds(2)).build());
        Store b = Stores.connected(RedisStore.builder().uri(Servers.standalone().uri())
            .keyPrefix(prefix).deadline(Duration.ofSeconds(2)).build())) {
      Store[] stores = {a, b};
      ConcurrentLinkedQueue<Long> granted = new ConcurrentLinkedQueue<>();
      ExactLimitIntegrationTests.run(32, 1000, i -> {
        long id = stores[i % 2].acquire("ws:shared", 55, Duration.ofMinutes(1).toNanos());
        if (id != 0) {
          granted.add(id);
        }
        return dev.sluice.core.Decision.unlimited();
      });
      assertThat(granted).hasSize(55).doesNotHaveDuplicates();
      assertThat(a.leases("ws:shared")).isEqualTo(55);
    }
  }
}
