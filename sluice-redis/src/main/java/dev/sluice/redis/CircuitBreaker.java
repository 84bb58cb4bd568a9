package dev.sluice.redis;

import dev.sluice.core.Circuit;
import dev.sluice.core.Ticker;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Stops calling a Redis that is failing and resumes as soon as it answers: Resilience4j's model
 * (failure-rate and slow-call-rate thresholds over a sliding window, a minimum number of calls,
 * half-open probes), driven by completion callbacks, so it does not care how a call is waited
 * for.
 *
 * <p>Why not "N consecutive failures", nor a window of the last N calls: a stall of the client
 * (a GC pause, the I/O thread starved of CPU) times out every call in flight at once, then
 * passes. On a 2-vCPU VM running other builds, 256 callers against a healthy Redis saw 46
 * timeouts among 100 consecutive calls; five in a row opened the old circuit for a full second
 * (a cold 64-thread burst: 2,404 of 2,560 decisions degraded). A stall fails at most the calls
 * in flight, once; a dead Redis fails every call, all the time. So the window is a time, the
 * last 2 s in ten 200 ms buckets: at 20,000 calls/s, 256 timeouts are 0.6 % of it. A window is
 * judged only once it has seen a full window of traffic, so the first burst of a cold client
 * (or of a freshly closed circuit) is never a verdict, and never below 100 calls.
 *
 * <p>With the defaults ({@link Circuit}): it opens when half of the last 2 s of calls
 * (at least 100) failed. A killed Redis refuses connections, so calls fail at once and soon
 * outnumber the window's successes: measured, it opened 0.8 s after the kill. A SIGSTOPped one
 * times every call out at the 50 ms deadline, so 16 callers fail 320 calls a second while the
 * window's successes age out: 1.8 s. Open, calls fail at once for 500 ms; then 3 calls go
 * through as probes, and it closes unless 2 of them fail. A reconnect ends the open time early,
 * so a restarted Redis is used again one reconnect (at most 500 ms) after it answers, a resumed
 * one within 500 ms plus a probe.
 *
 * <p>Hot path: a closed circuit costs one volatile read to admit a call and, per outcome, one
 * atomic add to the current bucket (calls, failures and slow calls packed in one long); the
 * window is summed only after a failed or slow call. Each state is an immutable {@link Phase}
 * with a generation: an outcome recorded for an older generation (a call admitted before the
 * last transition) is ignored, so the probes' verdict is only the probes'.
 */
final class CircuitBreaker {

  enum State { CLOSED, OPEN, HALF_OPEN }

  /** Told about each transition, once, by the thread that made it. */
  @FunctionalInterface
  interface Transitions {
    void moved(State from, State to, String why);
  }

  /** What {@link #tryAcquire()} returns when the call must not go to Redis. */
  static final long REFUSED = -1;

  private static final int BUCKETS = 10;
  // One bucket's counts in one long: calls in bits 0-21, failures 22-42, slow calls 43-63
  // (4 million calls per bucket, far above what one Redis answers in a tenth of a second).
  private static final long CALL = 1L;
  private static final long FAILED = 1L << 22;
  private static final long SLOW = 1L << 43;

  private final Circuit config;
  private final long slowNanos;
  private final long openNanos;
  private final long bucketNanos;
  private final Ticker ticker;
  private final Transitions transitions;
  private final AtomicReference<Phase> phase = new AtomicReference<>();
  private final AtomicLong generations = new AtomicLong();
  private final LongAdder failedTotal = new LongAdder();
  private final LongAdder slowTotal = new LongAdder();
  private final AtomicLong peakFailed = new AtomicLong();
  private final AtomicLong peakSlow = new AtomicLong();

  /** Calls, failures and slow calls of one tenth of the window. */
  private record Bucket(long epoch, AtomicLong counts) {}

  /** One state: the window (closed), the probes' outcomes (half-open) or nothing (open). */
  private static final class Phase {
    final State state;
    final long generation;
    final long since;
    final AtomicReferenceArray<Bucket> window;
    final AtomicLong firstEpoch = new AtomicLong(Long.MAX_VALUE);
    final AtomicInteger permits;
    final AtomicInteger recorded = new AtomicInteger();
    final AtomicInteger failures = new AtomicInteger();
    final AtomicInteger slows = new AtomicInteger();

    Phase(State state, long generation, long since, int probes) {
      this.state = state;
      this.generation = generation;
      this.since = since;
      this.window = state == State.CLOSED ? new AtomicReferenceArray<>(BUCKETS) : null;
      this.permits = new AtomicInteger(probes);
    }
  }

  CircuitBreaker(Circuit config, long deadlineNanos, Ticker ticker,
      Transitions transitions) {
    this.config = config;
    this.slowNanos = config.slowCall() == null ? deadlineNanos : config.slowCall().toNanos();
    this.openNanos = config.open().toNanos();
    this.bucketNanos = Math.max(1, config.window().toNanos() / BUCKETS);
    this.ticker = ticker;
    this.transitions = transitions;
    phase.set(new Phase(State.CLOSED, 0, ticker.read(), 0));
  }

  /**
   * A permit for one call to Redis, or {@link #REFUSED}. Every permit must come back through
   * {@link #record} or {@link #release}.
   */
  long tryAcquire() {
    Phase p = phase.get();
    if (p.state == State.CLOSED) {
      return p.generation;
    }
    if (p.state == State.OPEN) {
      if (ticker.read() - p.since < openNanos) {
        return REFUSED;
      }
      p = halfOpen(p, "open for " + config.open().toMillis() + " ms");
      if (p.state != State.HALF_OPEN) {
        return p.state == State.CLOSED ? p.generation : REFUSED;
      }
    }
    for (int n = p.permits.get(); n > 0; n = p.permits.get()) {
      if (p.permits.compareAndSet(n, n - 1)) {
        return p.generation;
      }
    }
    return REFUSED;
  }

  /** Gives back a permit whose call never reached Redis (for example, too many in flight). */
  void release(long permit) {
    Phase p = phase.get();
    if (p.generation == permit && p.state == State.HALF_OPEN) {
      p.permits.incrementAndGet();
    }
  }

  /**
   * Records the outcome of a call admitted with {@code permit} that started at {@code start}
   * (read from the same ticker); {@code failure} is null on success.
   */
  void record(long permit, long start, Throwable failure) {
    long now = ticker.read();
    boolean slow = now - start >= slowNanos;
    if (failure != null) {
      failedTotal.increment();
    } else if (slow) {
      slowTotal.increment();
    }
    Phase p = phase.get();
    if (p.generation != permit || p.state == State.OPEN) {
      return;
    }
    if (p.state == State.CLOSED) {
      recordClosed(p, now, failure, slow);
    } else {
      recordProbe(p, failure, slow);
    }
  }

  private void recordClosed(Phase p, long now, Throwable failure, boolean slow) {
    long epoch = Math.floorDiv(now - p.since, bucketNanos);
    Bucket b = bucket(p, epoch);
    if (b == null) {
      return;
    }
    b.counts().getAndAdd(CALL | (failure != null ? FAILED : 0) | (slow ? SLOW : 0));
    if (p.firstEpoch.get() == Long.MAX_VALUE) {
      p.firstEpoch.compareAndSet(Long.MAX_VALUE, epoch);
    }
    // Only a bad outcome can raise a rate. A window is judged once it holds a full window of
    // traffic: the first burst of a cold client is one stall, not a verdict on Redis.
    if ((failure == null && !slow) || epoch - p.firstEpoch.get() < BUCKETS) {
      return;
    }
    long[] w = sum(p, epoch);
    if (w[0] >= Math.min(config.minimumCalls(), 100)) {
      peak(peakFailed, w[1], w[0]);
      peak(peakSlow, w[2], w[0]);
    }
    if (w[0] >= config.minimumCalls()) {
      String why = tripped(w[1], w[2], w[0]);
      if (why != null) {
        open(p, why + " of " + w[0] + " calls in the last " + config.window().toMillis()
            + " ms (last: " + describe(failure) + ")");
      }
    }
  }

  /** The bucket of {@code epoch}, replacing the one it reuses; null for a straggler's. */
  private static Bucket bucket(Phase p, long epoch) {
    int slot = (int) Math.floorMod(epoch, (long) BUCKETS);
    while (true) {
      Bucket b = p.window.get(slot);
      if (b != null && b.epoch() == epoch) {
        return b;
      }
      if (b != null && b.epoch() > epoch) {
        return null;
      }
      Bucket fresh = new Bucket(epoch, new AtomicLong());
      if (p.window.compareAndSet(slot, b, fresh)) {
        return fresh;
      }
    }
  }

  /** Calls, failures and slow calls of the buckets within the window ending at {@code epoch}. */
  private static long[] sum(Phase p, long epoch) {
    long calls = 0;
    long failures = 0;
    long slows = 0;
    for (int i = 0; i < BUCKETS; i++) {
      Bucket b = p.window.get(i);
      if (b != null && b.epoch() > epoch - BUCKETS && b.epoch() <= epoch) {
        long c = b.counts().get();
        calls += c & (FAILED - 1);
        failures += (c >>> 22) & ((1L << 21) - 1);
        slows += c >>> 43;
      }
    }
    return new long[] {calls, failures, slows};
  }

  private void recordProbe(Phase p, Throwable failure, boolean slow) {
    int failures = failure != null ? p.failures.incrementAndGet() : p.failures.get();
    int slows = slow ? p.slows.incrementAndGet() : p.slows.get();
    int done = p.recorded.incrementAndGet();
    int probes = config.halfOpenCalls();
    // Reopen as soon as the probes already missed, before the last one answers.
    String why = tripped(failures, slows, probes);
    if (why != null) {
      open(p, why + " of " + probes + " probes (last: " + describe(failure) + ")");
    } else if (done >= probes) {
      move(p, new Phase(State.CLOSED, generations.incrementAndGet(), ticker.read(), 0),
          probes + " probes answered");
    }
  }

  /** The reason these counts open the circuit, or null. */
  private String tripped(long failures, long slows, long calls) {
    if (failures * 100 >= config.failureRate() * calls) {
      return "failure rate " + failures * 100 / calls + " % (threshold " + config.failureRate()
          + " %)";
    }
    if (slows * 100 >= config.slowCallRate() * calls) {
      return "slow-call rate " + slows * 100 / calls + " % (threshold " + config.slowCallRate()
          + " %, slow: " + slowNanos / 1_000_000 + " ms or more)";
    }
    return null;
  }

  /** Ends the open time early: the connection came back, so the next calls are probes. */
  void probeNow(String why) {
    Phase p = phase.get();
    if (p.state == State.OPEN) {
      halfOpen(p, why);
    }
  }

  private Phase halfOpen(Phase open, String why) {
    Phase next = new Phase(State.HALF_OPEN, generations.incrementAndGet(), ticker.read(),
        config.halfOpenCalls());
    return move(open, next, why) ? next : phase.get();
  }

  private void open(Phase from, String why) {
    move(from, new Phase(State.OPEN, generations.incrementAndGet(), ticker.read(), 0), why);
  }

  private boolean move(Phase from, Phase to, String why) {
    if (!phase.compareAndSet(from, to)) {
      return false;
    }
    transitions.moved(from.state, to.state, why);
    return true;
  }

  private static String describe(Throwable failure) {
    if (failure == null) {
      return "a slow answer";
    }
    String m = failure.getMessage();
    return failure.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  State state() {
    return phase.get().state;
  }

  /** True once the closed window has seen a full window of traffic (so it is judged). */
  boolean judging() {
    Phase p = phase.get();
    return p.state == State.CLOSED && Math.floorDiv(ticker.read() - p.since, bucketNanos)
        - p.firstEpoch.get() >= BUCKETS;
  }

  private static void peak(AtomicLong peak, long part, long calls) {
    long permille = part * 1000 / calls;
    for (long p = peak.get(); permille > p && !peak.compareAndSet(p, permille); p = peak.get()) {
      // retry
    }
  }

  /**
   * Failed calls and calls that answered but slowly since the start, and the highest share of
   * each (per mille) in a window that was judged (tests and load runs report them).
   */
  long[] totals() {
    return new long[] {failedTotal.sum(), slowTotal.sum(), peakFailed.get(), peakSlow.get()};
  }

  /** Calls, failures and slow calls in the current window (tests, load runs). */
  long[] window() {
    Phase p = phase.get();
    if (p.state != State.CLOSED) {
      return new long[3];
    }
    return sum(p, Math.floorDiv(ticker.read() - p.since, bucketNanos));
  }
}
