package dev.sluice.netty;

/**
 * A per-connection message bucket (seed 000: burst 120, 40 per second), small enough to live in
 * every WebSocket handler. Not thread-safe: one connection's frames arrive on one event loop.
 *
 * <p>It is the generic cell rate algorithm, which is a token bucket stored as one number: the
 * theoretical arrival time {@code tat} of the next message if messages came exactly at the refill
 * rate. With 40 per second a token comes back every {@code interval} = 25 ms; a burst of 120 means
 * a message may arrive up to {@code tolerance} = 119 x 25 ms = 2,975 ms ahead of that schedule.
 * 120 messages at one instant push {@code tat} to now + 3,000 ms; the 121st would be 3,000 ms
 * ahead, more than the tolerance, and is refused. 25 ms later it is 2,975 ms ahead and passes.
 * Only differences of ticker readings are used, so a ticker near {@code Long.MAX_VALUE} or below
 * zero works the same.
 */
final class MessageFloodBucket {

  private final long interval;
  private final long tolerance;
  private long tat;
  private boolean started;

  MessageFloodBucket(long burst, long perSecond) {
    if (burst <= 0) {
      throw new IllegalArgumentException("floodBurst : " + burst + " (expected: > 0)");
    }
    if (perSecond <= 0) {
      throw new IllegalArgumentException("floodPerSecond : " + perSecond + " (expected: > 0)");
    }
    this.interval = Math.max(1, 1_000_000_000L / perSecond);
    this.tolerance = Math.multiplyHigh(burst - 1, interval) != 0 || (burst - 1) * interval < 0
        ? Long.MAX_VALUE / 2 : (burst - 1) * interval;
  }

  /** Takes one token at {@code now}; false (consuming nothing) when the bucket is empty. */
  boolean tryAcquire(long now) {
    long t = started && tat - now > 0 ? tat : now;
    if (t - now > tolerance) {
      return false;
    }
    started = true;
    tat = t + interval;
    return true;
  }
}
