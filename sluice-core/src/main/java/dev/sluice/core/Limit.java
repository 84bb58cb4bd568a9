package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.time.Duration;
import java.util.Locale;

/**
 * One named limit: an algorithm and its parameters, immutable and validated when built.
 *
 * <p>Every factory rejects impossible values at once with an {@link IllegalArgumentException} that
 * names the field, the value and what was expected, for example
 * {@code "burst : -5 (expected: > 0)"}.
 */
public final class Limit {

  /** The algorithm of a limit. */
  public enum Kind {
    TOKEN_BUCKET, FIXED_WINDOW, SLIDING_WINDOW, SLIDING_LOG, SCORE, LEAKY_BUCKET;

    /** The name used in policy files, {@code token-bucket} and so on. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  private final String name;
  private final Kind kind;
  private final long capacity;
  private final long windowNanos;
  private final long periodNanos;
  private final double maxScore;
  private final double perAction;
  private final long refill;
  private final Duration period;
  private final Algorithm algorithm;

  private Limit(String name, Kind kind, long capacity, long windowNanos, long periodNanos,
      double maxScore, double perAction, long refill, Duration period, Algorithm algorithm) {
    this.name = Checks.name(name, "name");
    this.kind = kind;
    this.capacity = capacity;
    this.windowNanos = windowNanos;
    this.periodNanos = periodNanos;
    this.maxScore = maxScore;
    this.perAction = perAction;
    this.refill = refill;
    this.period = period;
    this.algorithm = algorithm;
  }

  /**
   * A token bucket holding up to {@code burst} tokens, refilled continuously with {@code refill}
   * tokens per {@code period} (seed 000: burst 15, 30 per minute).
   */
  public static Limit tokenBucket(String name, long burst, long refill, Duration period) {
    Checks.capacity(burst, "burst");
    Checks.capacity(refill, "refill");
    long periodNanos = Checks.duration(period, "period");
    long interval = -Math.floorDiv(-periodNanos, refill);
    if (Math.multiplyHigh(burst, interval) != 0 || burst * interval > Checks.MAX_NANOS) {
      throw Checks.invalid("burst", burst, "a bucket that refills from empty within 3653 days at "
          + refill + " per " + period);
    }
    return new Limit(name, Kind.TOKEN_BUCKET, burst, burst * interval, interval, Double.NaN,
        Double.NaN, refill, period, new TokenBucket(burst, interval));
  }

  /** At most {@code limit} calls per aligned window (seed 004: 600 per 60 s). */
  public static Limit fixedWindow(String name, long limit, Duration window) {
    Checks.capacity(limit, "limit");
    long w = Checks.duration(window, "window");
    return new Limit(name, Kind.FIXED_WINDOW, limit, w, w, Double.NaN, Double.NaN, 0, window,
        new FixedWindow(limit, w));
  }

  /** The two-bucket weighted counter of seed 001, constant memory per key. */
  public static Limit slidingWindow(String name, long limit, Duration window) {
    Checks.capacity(limit, "limit");
    long w = Checks.duration(window, "window");
    return new Limit(name, Kind.SLIDING_WINDOW, limit, w, w, Double.NaN, Double.NaN, 0, window,
        new SlidingWindow(limit, w));
  }

  /** Exact count of accepted calls in the last {@code window}; one timestamp per call. */
  public static Limit slidingLog(String name, int limit, Duration window) {
    Checks.positive(limit, "limit");
    if (limit > 100_000) {
      throw Checks.invalid("limit", limit, "<= 100000 for a sliding log, which stores every hit; "
          + "use a sliding window for larger limits");
    }
    long w = Checks.duration(window, "window");
    return new Limit(name, Kind.SLIDING_LOG, limit, w, w, Double.NaN, Double.NaN, 0, window,
        new SlidingLog(limit, w));
  }

  /**
   * A decaying score (seed 003): each call adds {@code perAction} points (may be fractional, like
   * 0.2); the score falls by one point per {@code decay}; refused when it would exceed
   * {@code maxScore}.
   */
  public static Limit score(String name, double maxScore, double perAction, Duration decay) {
    Checks.positive(maxScore, "maxScore");
    Checks.positive(perAction, "perAction");
    if (maxScore > 1e9) {
      throw Checks.invalid("maxScore", maxScore, "<= 1e9");
    }
    long max = Math.round(maxScore * DecayingScore.SCALE);
    long add = Math.round(perAction * DecayingScore.SCALE);
    if (add < 1 || add > max) {
      throw Checks.invalid("perAction", perAction,
          "between 0.000001 and maxScore " + maxScore);
    }
    long d = Checks.duration(decay, "decay");
    return new Limit(name, Kind.SCORE, max / add, Arith.mulDivCeil(max, d, DecayingScore.SCALE), d,
        maxScore, perAction, 0, decay, new DecayingScore(max, add, d));
  }

  /**
   * nginx's {@code limit_req zone=... burst=B} with the zone's {@code rate=Nr/s} ({@code period}
   * 1s) or {@code Nr/m} (1m), decided with nginx's own arithmetic (thousandths of a request, a
   * millisecond clock, truncating divisions), so that it refuses exactly what nginx refuses. A
   * new key admits {@code burst + 1} at once. {@code period} is a whole number of seconds; nginx's
   * rate in thousandths per second, {@code rate * 1000 / seconds} truncated, must be at least 1.
   */
  public static Limit leakyBucket(String name, long rate, Duration period, long burst) {
    Checks.capacity(rate, "rate");
    long periodNanos = Checks.duration(period, "period");
    if (periodNanos % 1_000_000_000L != 0) {
      throw Checks.invalid("period", period, "a whole number of seconds, like 1s or 1m");
    }
    long perSecond = rate * 1000 / (periodNanos / 1_000_000_000L);
    if (perSecond < 1) {
      throw Checks.invalid("rate", rate, "at least 1 per 1000 s (nginx keeps thousandths of a "
          + "request per second): " + rate + " per " + period + " is 0");
    }
    if (burst < 0 || burst >= Checks.MAX_CAPACITY) {
      throw Checks.invalid("burst", burst, "0.." + (Checks.MAX_CAPACITY - 1));
    }
    long excessMillis = burst * LeakyBucket.UNIT;
    // One request drains in 1000 / perSecond s; a full bucket in (burst + 1) times that.
    long stepNanos = -Math.floorDiv(-1_000_000_000_000L, perSecond);
    long drainNanos = Math.min(Checks.MAX_NANOS, Math.multiplyHigh(burst + 1, stepNanos) != 0
        ? Checks.MAX_NANOS : (burst + 1) * stepNanos);
    return new Limit(name, Kind.LEAKY_BUCKET, burst + 1, drainNanos, stepNanos, Double.NaN,
        Double.NaN, rate, period, new LeakyBucket(perSecond, excessMillis));
  }

  /** The limit's name, as reported in decisions and headers. */
  public String name() {
    return name;
  }

  public Kind kind() {
    return kind;
  }

  /**
   * The most calls of cost 1 a fresh key may make at once: burst, limit,
   * {@code floor(maxScore / perAction)} for a score, or {@code burst + 1} for a leaky bucket.
   */
  public long capacity() {
    return capacity;
  }

  /**
   * The policy window in nanoseconds: the window, or for a token bucket the time to refill from
   * empty, or for a score the time to decay from {@code maxScore} to zero.
   */
  public long windowNanos() {
    return windowNanos;
  }

  /**
   * The algorithm's step in nanoseconds: for a token bucket the time one token takes to come back
   * (rounded up), for a score the time one point takes to decay, otherwise the window.
   */
  public long periodNanos() {
    return periodNanos;
  }

  /** For a score limit, its maximum; otherwise NaN. */
  public double maxScore() {
    return maxScore;
  }

  /** For a score limit, the points one call adds; otherwise NaN. */
  public double perAction() {
    return perAction;
  }

  /**
   * For a token bucket, the tokens that come back per {@link #period()}, as given; for a leaky
   * bucket its rate per {@link #period()}; otherwise 0.
   */
  public long refill() {
    return refill;
  }

  /**
   * As given, before any rounding: a token bucket's refill period, a leaky bucket's rate period,
   * the window of the window and log kinds, a score's decay. What a policy file shows; the algorithm runs on
   * {@link #periodNanos()} and {@link #windowNanos()}.
   */
  public Duration period() {
    return period;
  }

  Algorithm algorithm() {
    return algorithm;
  }

  /** Every parameter that shapes the state, for {@link Rule#layout()}. */
  String layout() {
    return kind.configName() + "(" + capacity + "," + windowNanos + "," + periodNanos + ","
        + maxScore + "," + perAction + ")";
  }

  @Override
  public String toString() {
    String shape = kind == Kind.SCORE
        ? "max=" + maxScore + ", perAction=" + perAction
        : "capacity=" + capacity;
    return kind.configName() + " '" + name + "' (" + shape + ", window="
        + Duration.ofNanos(windowNanos) + ")";
  }
}
