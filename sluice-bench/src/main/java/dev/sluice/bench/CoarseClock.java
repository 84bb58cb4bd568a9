package dev.sluice.bench;

import dev.sluice.core.Ticker;
import io.github.bucket4j.TimeMeter;
import java.util.concurrent.locks.LockSupport;

/**
 * One clock for every library of a run, read from a field that a daemon thread refreshes from
 * {@code System.nanoTime()} about every 100 microseconds (nginx keeps its time the same way, once
 * per event-loop turn). On this VM a {@code System.nanoTime()} call costs about 30 ns, as much as
 * a limiter's own work; with this clock both sides pay a field read instead, so the comparison
 * measures the limiters. Both libraries get the same instance.
 */
final class CoarseClock implements Ticker, TimeMeter {

  private volatile long now = System.nanoTime();
  private volatile boolean running = true;

  CoarseClock() {
    Thread t = new Thread(() -> {
      while (running) {
        now = System.nanoTime();
        LockSupport.parkNanos(100_000);
      }
    }, "coarse-clock");
    t.setDaemon(true);
    t.start();
  }

  void stop() {
    running = false;
  }

  @Override
  public long read() {
    return now;
  }

  @Override
  public long currentTimeNanos() {
    return now;
  }

  @Override
  public boolean isWallClockBased() {
    return false;
  }
}
