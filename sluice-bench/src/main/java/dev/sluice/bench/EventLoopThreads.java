package dev.sluice.bench;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JMH's benchmark threads as Netty's own kind ({@code -Djmh.executor=CUSTOM
 * -Djmh.executor.class=dev.sluice.bench.EventLoopThreads}): Netty recycles its buffers and write
 * entries only on {@link FastThreadLocalThread}s, which every event loop is, so a benchmark of a
 * handler on a plain thread would count allocations the gateway never makes.
 */
public final class EventLoopThreads extends ThreadPoolExecutor {

  public EventLoopThreads(int maxThreads, String prefix) {
    super(maxThreads, maxThreads, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
        new java.util.concurrent.ThreadFactory() {
          private final AtomicInteger n = new AtomicInteger();

          @Override
          public Thread newThread(Runnable r) {
            Thread t = new FastThreadLocalThread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
          }
        });
  }
}
