package dev.sluice.redis;

import dev.sluice.core.Store;
import java.util.concurrent.TimeUnit;

/** Test helpers around stores. */
final class Stores {

  private Stores() {}

  /** Waits (bounded polling) until the store's background connection is up. */
  static <S extends Store> S connected(S store) {
    LettuceStore s = lettuce(store);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!s.connected()) {
      if (System.nanoTime() > until) {
        throw new AssertionError("store did not connect within 15 s: " + store);
      }
      RedisProcess.pause(10);
    }
    return store;
  }

  /** The Redis store itself, also behind a fallback. */
  static LettuceStore lettuce(Store store) {
    return store instanceof FallbackStore f ? f.primary() : (LettuceStore) store;
  }

  /**
   * Refusal notes the store has sent for the admin API, once none is on its way (bounded wait):
   * script calls that are not decisions, which call-counting tests take out of their count.
   */
  static long adminNotes(Store store) {
    LettuceStore s = lettuce(store);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!s.adminNotesSettled()) {
      if (System.nanoTime() > until) {
        throw new AssertionError("admin notes still in flight after 5 s: " + store);
      }
      RedisProcess.pause(1);
    }
    return s.adminNotes();
  }

  static String uniquePrefix(String name) {
    return "t" + Long.toString(System.nanoTime(), 36) + ":" + name + ":";
  }
}
