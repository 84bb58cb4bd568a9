package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * bucket.lua's {@code buckets} against its own {@code bucket} run one decision at a time, on a
 * real redis-server with a pinned clock: random calls of 2-24 decisions on 1-4 keys (so keys
 * repeat) or, every fourth call, on distinct keys (mostly without the repeat flag), two rule shapes, costs 0-3, and keys that start absent, with this rule's state, with
 * a ban carried over from an older version of the rule, or with another rule's state. Every
 * reply, every final value and every TTL must be the same, and a call writes each key once.
 */
class BucketsScriptIntegrationTests {

  private static final long NOW = 1_764_000_000_000_000L;
  private static final String[][] SHAPES = {
      {"s1,0,", "5000000", "1000000"},   // burst 5, one a second
      {"s2,0,", "300000", "100000"},     // burst 3, ten a second
  };

  private static RedisProcess redis;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    assertThat(redis.cmd("FUNCTION", "LOAD", "REPLACE", Scripts.LIBRARY)).doesNotStartWith("-");
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  @Test
  void batchedCalls_answerAndStoreAsOneAtATime_writingEachKeyOnce() {
    Random rnd = new Random(20261201L);
    for (int trial = 0; trial < 300; trial++) {
      long now = NOW + trial * 700_000L;
      int n = 2 + rnd.nextInt(23);
      // every fourth call on distinct keys, the shape the client sends without the repeat flag
      int keys = trial % 4 == 0 ? n : 1 + rnd.nextInt(4);
      int[] key = new int[n];
      int[] shape = new int[n];
      long[] cost = new long[n];
      for (int i = 0; i < n; i++) {
        key[i] = trial % 4 == 0 ? i : rnd.nextInt(keys);
        // a key belongs to one rule, so one shape
        shape[i] = key[i] % 2 == 0 || trial % 3 == 0 ? 0 : 1;
        cost[i] = rnd.nextInt(10) == 0 ? 0 : 1 + rnd.nextInt(3);
      }
      for (int k = 0; k < keys; k++) {
        String start = startState(rnd, now, k % 2 == 0 || trial % 3 == 0 ? 0 : 1);
        for (String side : new String[] {"one", "many"}) {
          String name = side + ":" + trial + ":" + k;
          if (start == null) {
            redis.cmd("DEL", name);
          } else {
            redis.cmd("SET", name, start, "PX", "600000");
          }
        }
      }

      List<String> alone = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String[] s = SHAPES[shape[i]];
        alone.add(redis.cmd("FCALL", Scripts.BUCKET.function(), "1",
            "one:" + trial + ":" + key[i], Long.toString(now), Long.toString(cost[i]), s[0],
            s[1], s[2]));
      }

      long writesBefore = redis.calls("psetex") + redis.calls("del");
      List<String> args = new ArrayList<>(List.of("FCALL", Scripts.BUCKETS.function(),
          Integer.toString(n)));
      Set<Integer> distinct = new LinkedHashSet<>();
      for (int i = 0; i < n; i++) {
        args.add("many:" + trial + ":" + key[i]);
        distinct.add(key[i]);
      }
      args.addAll(List.of(Long.toString(now), "2"));
      for (String[] s : SHAPES) {
        args.addAll(Arrays.asList(s));
      }
      args.add(distinct.size() < n || trial % 8 == 0 ? "1" : "0");   // "0": keys do not repeat
      for (int i = 0; i < n; i++) {
        args.add(Integer.toString(shape[i] + 1));
        args.add(Long.toString(cost[i]));
      }
      String batched = redis.cmd(args.toArray(String[]::new));
      long writes = redis.calls("psetex") + redis.calls("del") - writesBefore;

      String where = "trial " + trial + ", keys " + Arrays.toString(key) + ", costs "
          + Arrays.toString(cost);
      assertThat(batched.split("\n")).as(where).containsExactlyElementsOf(alone);
      assertThat(writes).as(where + ": writes of one call").isLessThanOrEqualTo(distinct.size());
      for (int k : distinct) {
        String one = "one:" + trial + ":" + k;
        String many = "many:" + trial + ":" + k;
        assertThat(redis.cmd("GET", many)).as(where + ", key " + k)
            .isEqualTo(redis.cmd("GET", one));
        long a = Long.parseLong(redis.cmd("PTTL", one).substring(1));
        long b = Long.parseLong(redis.cmd("PTTL", many).substring(1));
        assertThat(b).as(where + ", TTL of key " + k).isBetween(a - 2000, a + 2000);
      }
    }
  }

  /** Absent, this rule's state, a ban carried over, or another rule's state. */
  private static String startState(Random rnd, long now, int shape) {
    String sig = SHAPES[shape][0].substring(0, 2);
    return switch (rnd.nextInt(4)) {
      case 0 -> null;
      case 1 -> sig + ",0," + (now + rnd.nextInt(4_000_000) - 1_000_000);
      case 2 -> sig + "," + (now + rnd.nextInt(3_000_000)) + "," + (now + rnd.nextInt(2_000_000));
      default -> "zz,0," + (now + 3_000_000);
    };
  }
}
