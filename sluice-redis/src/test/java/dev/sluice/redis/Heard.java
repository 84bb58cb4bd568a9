package dev.sluice.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A listener that keeps what it heard, for tests: events with their time and detail. */
final class Heard implements RedisStore.Listener {

  record Entry(long nanos, RedisStore.Event event, String detail) {}

  private final List<Entry> all = new ArrayList<>();

  @Override
  public synchronized void on(RedisStore.Event event, String detail) {
    all.add(new Entry(System.nanoTime(), event, detail));
  }

  synchronized List<Entry> all() {
    return new ArrayList<>(all);
  }

  synchronized long count(RedisStore.Event event) {
    return all.stream().filter(h -> h.event() == event).count();
  }

  /** Polls (bounded) until {@code event} was heard {@code times} times; false past 15 s. */
  boolean await(RedisStore.Event event, long times) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (count(event) < times) {
      if (System.nanoTime() > until) {
        return false;
      }
      RedisProcess.pause(2);
    }
    return true;
  }
}
