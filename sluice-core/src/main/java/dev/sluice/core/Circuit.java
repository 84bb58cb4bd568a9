package dev.sluice.core;

import java.time.Duration;

/**
 * When the circuit in front of a remote store (Redis) opens and how it closes again
 * (Resilience4j's model). Closed, it judges the calls of the last {@link #window()} once there are at least
 * {@link #minimumCalls()} of them: it opens when the share that failed reaches
 * {@link #failureRate()} %, or the share that took {@link #slowCall()} or longer reaches
 * {@link #slowCallRate()} %. Open, calls fail at once for {@link #open()} (or until the
 * connection comes back); then {@link #halfOpenCalls()} probes go through, and it closes
 * unless their failure or slow rate reaches the threshold.
 *
 * <p>A plain value, read by the store that runs the breaker and by the policy file's
 * {@code store.circuit} alike, so its defaults and rules are written once. The defaults and the
 * measurements behind them: {@code sluice-redis/README.md}.
 */
public final class Circuit {
  private final int failureRate;
  private final int slowCallRate;
  private final Duration slowCall;
  private final Duration window;
  private final int minimumCalls;
  private final Duration open;
  private final int halfOpenCalls;

  private Circuit(Builder b) {
    this.failureRate = b.failureRate;
    this.slowCallRate = b.slowCallRate;
    this.slowCall = b.slowCall;
    this.window = b.window;
    this.minimumCalls = b.minimumCalls;
    this.open = b.open;
    this.halfOpenCalls = b.halfOpenCalls;
  }

  /**
   * 50 % failed, or 100 % at least as slow as the deadline, among at least 100 calls in the
   * last 2 s; open 500 ms; 3 probes.
   */
  public static Circuit defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.failureRate = failureRate;
    b.slowCallRate = slowCallRate;
    b.slowCall = slowCall;
    b.window = window;
    b.minimumCalls = minimumCalls;
    b.open = open;
    b.halfOpenCalls = halfOpenCalls;
    return b;
  }

  public int failureRate() {
    return failureRate;
  }

  public int slowCallRate() {
    return slowCallRate;
  }

  /** How long a call must take to count as slow; null: the store's deadline. */
  public Duration slowCall() {
    return slowCall;
  }

  public Duration window() {
    return window;
  }

  public int minimumCalls() {
    return minimumCalls;
  }

  public Duration open() {
    return open;
  }

  public int halfOpenCalls() {
    return halfOpenCalls;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Circuit c && failureRate == c.failureRate
        && slowCallRate == c.slowCallRate && java.util.Objects.equals(slowCall, c.slowCall)
        && window.equals(c.window) && minimumCalls == c.minimumCalls && open.equals(c.open)
        && halfOpenCalls == c.halfOpenCalls;
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(failureRate, slowCallRate, slowCall, window, minimumCalls,
        open, halfOpenCalls);
  }

  @Override
  public String toString() {
    return "Circuit{failureRate=" + failureRate + "%, slowCallRate=" + slowCallRate
        + "%, slowCall=" + (slowCall == null ? "deadline" : slowCall.toMillis() + "ms")
        + ", window=" + window.toMillis() + "ms, minimumCalls=" + minimumCalls + ", open="
        + open.toMillis() + "ms, halfOpenCalls=" + halfOpenCalls + "}";
  }

  /** Builds a {@link Circuit}; each setter validates its argument at once. */
  public static final class Builder {
    private int failureRate = 50;
    private int slowCallRate = 100;
    private Duration slowCall;
    private Duration window = Duration.ofSeconds(2);
    private int minimumCalls = 100;
    private Duration open = Duration.ofMillis(500);
    private int halfOpenCalls = 3;

    private Builder() {}

    /** Percent of failed calls in the window that opens the circuit, 1..100 (default 50). */
    public Builder failureRate(int percent) {
      this.failureRate = range("failureRate", percent, 1, 100);
      return this;
    }

    /** Percent of slow calls in the window that opens the circuit, 1..100 (default 100). */
    public Builder slowCallRate(int percent) {
      this.slowCallRate = range("slowCallRate", percent, 1, 100);
      return this;
    }

    /**
     * A call this long or longer is slow, 1 ms..1 min; null (the default) for the store's
     * deadline, so that only answers the caller no longer waited for are slow.
     */
    public Builder slowCall(Duration threshold) {
      this.slowCall = threshold == null ? null
          : within("slowCall", threshold, Duration.ofMillis(1), "1ms..1m");
      return this;
    }

    /** How far back the rates look, 100 ms..1 min, in tenths (default 2 s). */
    public Builder window(Duration window) {
      this.window = within("window", window, Duration.ofMillis(100), "100ms..1m");
      return this;
    }

    /** Calls the window must hold before it is judged, 1..1000000 (default 100). */
    public Builder minimumCalls(int calls) {
      this.minimumCalls = range("minimumCalls", calls, 1, 1_000_000);
      return this;
    }

    /** How long calls fail fast before probes, 1 ms..1 min (default 500 ms). */
    public Builder open(Duration wait) {
      this.open = within("open", wait, Duration.ofMillis(1), "1ms..1m");
      return this;
    }

    /** Probe calls let through when the open time is over, 1..1000 (default 3). */
    public Builder halfOpenCalls(int calls) {
      this.halfOpenCalls = range("halfOpenCalls", calls, 1, 1000);
      return this;
    }

    public Circuit build() {
      return new Circuit(this);
    }

    /** {@code d} if it lies in {@code min}..1 minute. */
    private static Duration within(String name, Duration d, Duration min, String expected) {
      if (d == null || d.compareTo(min) < 0 || d.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new InvalidValueException(name, String.valueOf(d), expected);
      }
      return d;
    }

    private static int range(String name, int value, int min, int max) {
      if (value < min || value > max) {
        throw new InvalidValueException(name, Integer.toString(value), min + ".." + max);
      }
      return value;
    }
  }
}
