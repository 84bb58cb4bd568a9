package dev.sluice.redis;

import io.lettuce.core.resource.ThreadFactoryProvider;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.TimeUnit;

/**
 * The store's own threads: Lettuce's I/O loops, its computation pool and the deadline timer.
 * Answers complete on an I/O thread and deadlines on the computation pool, so a synchronous call
 * made from one of them would wait for a reply only that thread can read: they are marked, and
 * such a call fails at once instead of hanging until its deadline.
 */
final class Threads {

  private Threads() {}

  /** A thread created for the store's client. */
  private static final class StoreThread extends FastThreadLocalThread {
    StoreThread(ThreadGroup group, Runnable r, String name) {
      super(group, r, name);
    }
  }

  /** True on one of the store's own threads, where nothing may wait for Redis. */
  static boolean onStoreThread() {
    return Thread.currentThread() instanceof StoreThread;
  }

  /** Lettuce's thread factories, making marked daemon threads with Lettuce's names. */
  static ThreadFactoryProvider provider() {
    return name -> new DefaultThreadFactory(name, true) {
      @Override
      protected Thread newThread(Runnable r, String threadName) {
        return new StoreThread(threadGroup, r, threadName);
      }
    };
  }

  /**
   * The timer behind every deadline (Lettuce's command timeout and the store's own follow-ups).
   * Lettuce's default ticks every 100 ms, so a 50 ms deadline fired after 50 to 150 ms; a tick of
   * a tenth of the deadline (1 to 10 ms) fires it within 10 % late, for at most 1,000 wake-ups a
   * second of one idle thread (the wheel ticks whether or not a call is pending).
   */
  static HashedWheelTimer timer(long deadlineNanos) {
    HashedWheelTimer timer = new HashedWheelTimer(provider().getThreadFactory(
        "sluice-redis-timer"), tick(deadlineNanos), TimeUnit.NANOSECONDS, 512);
    timer.start();
    return timer;
  }

  /** How late the timer may fire a deadline: a tick, and as much again for the wake-up. */
  static long slackNanos(long deadlineNanos) {
    return 2 * tick(deadlineNanos);
  }

  private static long tick(long deadlineNanos) {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(1),
        Math.min(TimeUnit.MILLISECONDS.toNanos(10), deadlineNanos / 10));
  }
}
