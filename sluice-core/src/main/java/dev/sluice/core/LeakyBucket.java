package dev.sluice.core;

/**
 * nginx's {@code limit_req} as nginx computes it: a leaky bucket whose level ("excess") is kept
 * in thousandths of a request and drained on a millisecond clock, so that a policy imported from
 * nginx refuses exactly the requests nginx refuses.
 *
 * <p>nginx stores the rate as {@code rate * 1000 / seconds} thousandths of a request per second,
 * truncated (30r/m is 500, 7r/m is 116, not 116.67), and the burst as {@code burst * 1000}. At a
 * request at millisecond {@code t} on a key last accepted at {@code last}:
 * {@code excess = max(0, excess - rate * (t - last) / 1000 + 1000)}, the division truncated; the
 * request is refused when {@code excess > burst}, and then nothing changes. An accepted request
 * stores the new excess and moves {@code last} to {@code t}. A key nginx has not seen starts at
 * {@code excess = 0}: its first request is free, so a burst of {@code B} admits {@code B + 1} at
 * once. The truncation loses the remainder of every drain: requests accepted 1 ms apart under
 * 30r/m drain nothing at all (500 * 1 / 1000 = 0), which no exact-rational bucket reproduces.
 *
 * <p>Worked numbers, {@code rate=2r/s burst=1} (rate 2000, burst 1000): requests at 0, 0, 0 ms:
 * excess 0 (new key), 1000, then 2000 > 1000, refused. At 499 ms: 1000 - 2000 * 499 / 1000 + 1000
 * = 1002, refused (retry-after 1 ms); at 500 ms: 1000, accepted.
 *
 * <p>nginx deletes a key idle for 60 s or more whose excess has drained to zero (lazily, when it
 * makes room for a new key); the next request then starts afresh at 0 rather than at up to
 * 1000. This bucket applies that rule at once, so it decides as nginx does once nginx has got
 * round to the deletion. A cost of {@code c} is {@code c} requests in the same millisecond, all
 * or none: a new key's first of them is free, the others add 1000 each. nginx's clock is monotonic; time going backwards drains
 * nothing here, as in nginx (which takes a jump of more than 60 s back as 1 ms).
 *
 * <p>State: {@code [excess in thousandths, last accepted millisecond]}. Fresh state (an excess of
 * -1000, or one that has drained to it) decides as a key never seen, and is dropped by the
 * store. A refund may leave an excess between -1000 and 0: drained, but not yet fresh.
 */
final class LeakyBucket extends Algorithm {

  /** One request, in nginx's thousandths. */
  static final long UNIT = 1000;
  /** nginx deletes a drained key idle this long (ngx_http_limit_req_expire). */
  static final long IDLE_MS = 60_000;
  private static final long NANOS_PER_MS = 1_000_000;

  /** Thousandths of a request drained per second (nginx's {@code ctx->rate}). */
  private final long rate;
  /** The largest excess accepted, in thousandths ({@code limit->burst}). */
  private final long burst;
  /** A drain this long empties any state this bucket can hold: caps the products below. */
  private final long drainMs;

  LeakyBucket(long rate, long burst) {
    this.rate = rate;
    this.burst = burst;
    this.drainMs = ceilDiv((burst + UNIT) * 1000, rate);
  }

  @Override
  int stateSize() {
    return 2;
  }

  @Override
  void init(long[] s, int off, long now) {
    s[off] = -UNIT;
    s[off + 1] = ms(now);
  }

  static long ms(long nanos) {
    return Math.floorDiv(nanos, NANOS_PER_MS);
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  private long drained(long elapsedMs) {
    return rate * Math.min(elapsedMs, drainMs) / 1000;
  }

  /** The level at {@code t}, before any request: -1000 when the state is fresh. */
  private long level(long[] s, int off, long t) {
    long elapsed = Math.max(0, t - s[off + 1]);
    long left = s[off] - drained(elapsed);
    if (left <= -UNIT || (elapsed >= IDLE_MS && left <= 0)) {
      return -UNIT;
    }
    return left;
  }

  /** nginx's excess after a request of {@code cost} at level {@code level}. */
  private static long after(long level, long cost) {
    return level == -UNIT ? (cost - 1) * UNIT : Math.max(0, level + cost * UNIT);
  }

  /** Milliseconds after {@code last} at which a state of excess {@code e} is fresh. */
  private long freshAfter(long e) {
    long drainedOut = ceilDiv((e + UNIT) * 1000, rate);
    long idle = Math.max(IDLE_MS, ceilDiv(e * 1000, rate));
    return Math.max(0, Math.min(drainedOut, idle));
  }

  @Override
  boolean test(long[] s, int off, long now, long cost, Probe probe) {
    long t = ms(now);
    long level = level(s, off, t);
    long e = after(level, cost);
    if (e <= burst) {
      long last = level == -UNIT ? t : Math.max(t, s[off + 1]);
      probe.remaining = (burst - e) / UNIT;
      probe.resetNanos = Math.max(0, (last + freshAfter(e)) * NANOS_PER_MS - now);
      return true;
    }
    long last = s[off + 1];
    probe.remaining = Math.max(0, (burst - level) / UNIT);
    probe.resetNanos = level == -UNIT ? 0 : Math.max(0,
        (last + freshAfter(s[off])) * NANOS_PER_MS - now);
    // The first millisecond at which the same request fits: drained enough, or fresh.
    long fits = ceilDiv((s[off] + cost * UNIT - burst) * 1000, rate);
    if ((cost - 1) * UNIT <= burst) {
      fits = Math.min(fits, freshAfter(s[off]));
    }
    probe.retryAfterNanos = Math.max(1, (last + fits) * NANOS_PER_MS - now);
    return false;
  }

  @Override
  void commit(long[] s, int off, long now, long cost) {
    long t = ms(now);
    long level = level(s, off, t);
    s[off] = after(level, cost);
    s[off + 1] = level == -UNIT ? t : Math.max(t, s[off + 1]);
  }

  @Override
  boolean isFresh(long[] s, int off, long now) {
    return level(s, off, ms(now)) == -UNIT;
  }
}
