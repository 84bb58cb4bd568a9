package dev.sluice.server.replay;

import dev.sluice.core.Ticker;

/**
 * The engine's clock during a replay: the log's time, moved forward by each line. It never goes
 * back: a line older than the latest one seen (logs written at a response's end are a little out
 * of order; merged files overlap) is decided at the latest time and counted.
 */
final class ReplayClock implements Ticker {

  private long origin = Long.MIN_VALUE;
  private long now;
  long backwards;
  long maxBehindMicros;

  /** Moves to {@code micros} (since the epoch) unless that is earlier; returns the clock's time. */
  long advance(long micros) {
    if (origin == Long.MIN_VALUE) {
      origin = micros;
      now = micros;
    } else if (micros >= now) {
      now = micros;
    } else {
      backwards++;
      maxBehindMicros = Math.max(maxBehindMicros, now - micros);
    }
    return now;
  }

  /** Microseconds since the epoch, the latest line's. */
  long micros() {
    return now;
  }

  /** Nanoseconds since the first line (0 before it). */
  @Override
  public long read() {
    return origin == Long.MIN_VALUE ? 0 : (now - origin) * 1000;
  }
}
