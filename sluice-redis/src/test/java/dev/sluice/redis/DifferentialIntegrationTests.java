package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * One semantics, two executions: the in-memory store and the Redis store replay the same random
 * traces (costs, gaps in whole microseconds, several keys, every algorithm, multi-limit rules,
 * bans, shadow rules, multi-rule checks) and must agree on every verdict. Allowed, limit,
 * remaining, score, ban flags are equal; reset and retry-after may be later on Redis by less
 * than 1 µs, its time resolution (a score's decay or a sliding window's exact boundary falls
 * between microseconds).
 */
class DifferentialIntegrationTests {

  @Test
  void standalone_agreesWithMemoryStore_onRandomTraces() {
    for (long seed = 1; seed <= 6; seed++) {
      replay(Servers.standalone().uri(), seed, 2500);
    }
  }

  @Test
  void cluster_agreesWithMemoryStore_onRandomTraces() {
    for (long seed = 101; seed <= 103; seed++) {
      replay(Servers.cluster().uri(), seed, 2000);
    }
  }

  /**
   * Production clocks read about 1.7e15 us, near the 2^53 limit of exact Lua doubles. Windows
   * aligned to the epoch cannot line up with the memory store's zero-based timeline, so this
   * trace uses the unaligned algorithms (token bucket, sliding log, score).
   */
  @Test
  void standalone_agreesAtUnixEpochMagnitudes() {
    for (long seed = 201; seed <= 203; seed++) {
      replay(Servers.standalone().uri(), seed, 1500, 1_760_000_000_123_456L, new int[] {0, 3, 4});
    }
  }

  /**
   * The token-bucket fast path (bucket.lua: one rule, one token bucket, no ban) against the
   * memory store, interleaved with multi-rule checks that read and write the same keys through
   * evaluate.lua, so the two paths must agree on the state they share.
   */
  @Test
  void standalone_agreesOnTheTokenBucketFastPath() {
    for (long seed = 301; seed <= 303; seed++) {
      replay(Servers.standalone().uri(), seed, 2500, 0, new int[] {0}, true, true);
    }
    replay(Servers.standalone().uri(), 304, 1500, 1_760_000_000_123_456L, new int[] {0}, true,
        true);
  }

  /**
   * nginx's leaky bucket (leaky.lua) alone, beside the other kinds in multi-limit rules, at
   * epoch magnitudes, on a cluster (refunds across slots) and without functions. Its clock is
   * nginx's millisecond, so the epoch trace starts on a whole millisecond of both timelines.
   */
  @Test
  void leakyBucket_agreesWithMemoryStore() {
    replay(Servers.standalone().uri(), 501, 2500, 0, new int[] {5});
    replay(Servers.standalone().uri(), 502, 2500, 0, new int[] {5, 0, 3, 4});
    replay(Servers.standalone().uri(), 503, 1500, 1_760_000_000_123_000L, new int[] {5, 0});
    replay(Servers.standalone().uri(), 504, 1500, 0, new int[] {5, 1}, false, true);
    replay(Servers.cluster().uri(), 505, 1500, 0, new int[] {5, 2});
  }

  /** The EVALSHA path (servers without Redis 7 functions) runs the same Lua. */
  @Test
  void standalone_withoutFunctions_agreesWithMemoryStore() {
    replay(Servers.standalone().uri(), 401, 2000, 0, new int[] {0, 1, 2, 3, 4}, false, false);
    replay(Servers.standalone().uri(), 301, 2500, 0, new int[] {0}, false, true);
  }

  @Test
  void everyKeyHasATtl_afterATrace() {
    RedisProcess redis = Servers.standalone();
    String prefix = replay(redis.uri(), 77, 1500);
    List<String> keys = List.of(redis.cmd("KEYS", prefix + "*").split("\n"));
    assertThat(keys).isNotEmpty();
    for (String key : keys) {
      if (key.isEmpty()) {
        continue;
      }
      long ttl = Long.parseLong(redis.cmd("PTTL", key).substring(1));
      assertThat(ttl).as("PTTL of %s", key).isPositive();
    }
  }

  static String replay(String uri, long seed, int steps) {
    return replay(uri, seed, steps, 0, new int[] {0, 1, 2, 3, 4});
  }

  static String replay(String uri, long seed, int steps, long baseMicros, int[] kinds) {
    return replay(uri, seed, steps, baseMicros, kinds, true, false);
  }

  /**
   * {@code buckets}: every rule but the first (which always has a ban) is one limit of the given
   * kinds without a ban, the fast path's shape when the kinds are {0}.
   */
  static String replay(String uri, long seed, int steps, long baseMicros, int[] kinds,
      boolean functions, boolean buckets) {
    AtomicLong nanos = new AtomicLong();
    String prefix = Stores.uniquePrefix("diff" + seed);
    Store memory = Store.memory(nanos::get, 1_000_000);
    try (Store redis = Stores.connected(RedisStore.builder().uri(uri).keyPrefix(prefix)
        .deadline(Duration.ofSeconds(5)).refusalCacheSize(0).functions(functions)
        .pinnedClock(() -> baseMicros + nanos.get() / 1000).build())) {
      Random rnd = new Random(seed);
      List<Rule> rules = new ArrayList<>();
      for (int r = 0; r < 6; r++) {
        Rule rule = buckets && r > 0 ? singleLimitRule(rnd, "r" + r, kinds)
            : randomRule(rnd, "r" + r, r == 0, kinds);
        // Each rule keys on its own dimension, so one check's rules count different callers.
        rules.add(rule.toBuilder().key("d" + r).build());
      }
      String[] ids = {"a", "1.2.3.4", "x:y"};
      List<String> log = new ArrayList<>();
      int allowed = 0;
      int refused = 0;
      int bans = 0;
      for (int step = 0; step < steps; step++) {
        nanos.addAndGet(gapMicros(rnd) * 1000L);
        List<Rule> pool = new ArrayList<>(rules);
        Collections.shuffle(pool, rnd);
        int n = 1 + (rnd.nextInt(10) < 7 ? 0 : rnd.nextInt(3));
        List<Rule> check = pool.subList(0, n);
        List<String> keys = new ArrayList<>();
        Identity who = Identity.empty();
        long maxCost = Long.MAX_VALUE;
        for (Rule rule : check) {
          String id = ids[rnd.nextInt(ids.length)];
          who = who.with(rule.dimensions().get(0), id);
          keys.add(rule.name() + ":" + id);
          for (Limit l : rule.limits()) {
            maxCost = Math.min(maxCost, l.capacity());
          }
        }
        long cost = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt((int) Math.min(3, maxCost)) : 1;
        Verdicts memoryOut = new Verdicts();
        Verdicts redisOut = new Verdicts();
        memory.evaluate(check, who, cost, memoryOut);
        redis.evaluate(check, who, cost, redisOut);
        List<Verdict> expected = memoryOut.toList();
        List<Verdict> actual = redisOut.toList();
        String where = "seed " + seed + " step " + step + " t=" + nanos.get() / 1000 + "us cost "
            + cost + " keys " + keys + " rules " + check + "\nrecent:\n"
            + String.join("\n", log.subList(Math.max(0, log.size() - 8), log.size()));
        for (int i = 0; i < n; i++) {
          assertSame(expected.get(i), actual.get(i), where + "\nrule " + i);
          Verdict v = actual.get(i);
          allowed += v.allowed() ? 1 : 0;
          refused += v.allowed() ? 0 : 1;
          bans += v.banApplied() ? 1 : 0;
        }
        log.add("t=" + nanos.get() / 1000 + " " + keys + " cost " + cost + " -> " + actual);
      }
      // The trace must exercise both outcomes and bans, or agreeing proves little.
      assertThat(allowed).as("allowed verdicts, seed " + seed).isGreaterThan(steps / 5);
      assertThat(refused).as("refused verdicts, seed " + seed).isGreaterThan(steps / 20);
      assertThat(bans).as("bans started, seed " + seed).isPositive();
    }
    return prefix;
  }

  static void assertSame(Verdict expected, Verdict actual, String where) {
    String msg = where + "\nexpected " + expected + "\nactual   " + actual;
    assertThat(actual.allowed()).as(msg).isEqualTo(expected.allowed());
    assertThat(actual.limitIndex()).as(msg).isEqualTo(expected.limitIndex());
    assertThat(actual.remaining()).as(msg).isEqualTo(expected.remaining());
    assertThat(actual.banned()).as(msg).isEqualTo(expected.banned());
    assertThat(actual.banApplied()).as(msg).isEqualTo(expected.banApplied());
    assertThat(Double.compare(actual.score(), expected.score())).as(msg).isZero();
    assertThat(actual.resetNanos() - expected.resetNanos()).as(msg).isBetween(0L, 999L);
    assertThat(actual.retryAfterNanos() - expected.retryAfterNanos()).as(msg)
        .isBetween(0L, 999L);
  }

  static long gapMicros(Random rnd) {
    int p = rnd.nextInt(100);
    if (p < 35) {
      return 0;
    }
    if (p < 65) {
      return 1 + rnd.nextInt(100);
    }
    if (p < 90) {
      return 100 + rnd.nextInt(2_000);
    }
    return rnd.nextInt(50_000);
  }

  static Rule randomRule(Random rnd, String name, boolean banned, int[] kinds) {
    Rule.Builder b = Rule.builder(name);
    int limits = 1 + (rnd.nextInt(10) < 5 ? 0 : rnd.nextInt(3));
    for (int j = 0; j < limits; j++) {
      b.limit(randomLimit(rnd, "l" + j, kinds[rnd.nextInt(kinds.length)]));
    }
    if (banned || rnd.nextInt(10) < 3) {
      b.ban(Duration.ofNanos(1000L * (1000 + rnd.nextInt(100_000))));
    }
    if (!banned && rnd.nextInt(10) < 2) {
      b.mode(Mode.SHADOW);
    }
    return b.build();
  }

  static Rule singleLimitRule(Random rnd, String name, int[] kinds) {
    Rule.Builder b = Rule.builder(name)
        .limit(randomLimit(rnd, "l0", kinds[rnd.nextInt(kinds.length)]));
    if (rnd.nextInt(10) < 2) {
      b.mode(Mode.SHADOW);
    }
    return b.build();
  }

  static Limit randomLimit(Random rnd, String name, int kind) {
    int limit = 1 + rnd.nextInt(10);
    Duration window = Duration.ofNanos(1000L * (1000 + rnd.nextInt(100_000)));
    switch (kind) {
      case 0: {
        long refill = 1 + rnd.nextInt(5);
        long interval = 100 + rnd.nextInt(50_000);
        return Limit.tokenBucket(name, limit, refill,
            Duration.ofNanos(Math.max(1_000_000L, interval * 1000 * refill)));
      }
      case 1:
        return Limit.fixedWindow(name, limit, window);
      case 2:
        return Limit.slidingWindow(name, limit, window);
      case 3:
        return Limit.slidingLog(name, limit, window);
      case 5: {
        // Rates from 1 a minute (16 thousandths a second: drains truncate) to 300 a second.
        long rate = rnd.nextBoolean() ? 1 + rnd.nextInt(300) : 1 + rnd.nextInt(40);
        return Limit.leakyBucket(name, rate,
            rnd.nextBoolean() ? Duration.ofSeconds(1) : Duration.ofMinutes(1), limit - 1);
      }
      default: {
        double[] maxes = {1, 2.5, 6, 10};
        double[] adds = {0.2, 0.5, 1, 1.3};
        double max = maxes[rnd.nextInt(maxes.length)];
        double add = adds[rnd.nextInt(adds.length)];
        if (add > max) {
          add = max;
        }
        return Limit.score(name, max, add, window);
      }
    }
  }
}
