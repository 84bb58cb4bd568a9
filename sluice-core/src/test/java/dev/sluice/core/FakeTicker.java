package dev.sluice.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker the test moves by hand. */
public final class FakeTicker implements Ticker {

  private final AtomicLong nanos;

  public FakeTicker() {
    this(0);
  }

  public FakeTicker(long start) {
    this.nanos = new AtomicLong(start);
  }

  @Override
  public long read() {
    return nanos.get();
  }

  public FakeTicker advance(Duration d) {
    nanos.addAndGet(d.toNanos());
    return this;
  }

  public FakeTicker advanceNanos(long n) {
    nanos.addAndGet(n);
    return this;
  }
}
