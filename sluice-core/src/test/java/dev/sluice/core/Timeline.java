package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a test as a sequence of times and outcomes, in the spirit of Guava's RateLimiterTest:
 * {@code "A@0.000"} is an allowed call at t = 0 s, {@code "R@2.000"} a refused one.
 */
final class Timeline {

  final FakeTicker ticker;
  final RateLimiter limiter;
  private final long start;

  Timeline(long start, int maxKeys) {
    this.ticker = new FakeTicker(start);
    this.start = start;
    this.limiter = RateLimiter.of(Store.memory(ticker, maxKeys));
  }

  Timeline() {
    this(0, 10_000);
  }

  static Rule rule(Limit... limits) {
    Rule.Builder b = Rule.builder("r");
    for (Limit limit : limits) {
      b.limit(limit);
    }
    return b.build();
  }

  /** Moves to {@code seconds} after the start. */
  Timeline at(double seconds) {
    long target = start + Math.round(seconds * 1e9);
    ticker.advanceNanos(target - ticker.read());
    return this;
  }

  Timeline atNanos(long nanos) {
    ticker.advanceNanos(start + nanos - ticker.read());
    return this;
  }

  Decision check(Rule rule) {
    return limiter.check(rule, Identity.ip("192.0.2.1"));
  }

  Decision check(Rule rule, long cost) {
    return limiter.check(List.of(rule), Identity.ip("192.0.2.1"), cost);
  }

  /** Makes {@code n} calls now and returns "A"/"R" for each. */
  List<String> burst(Rule rule, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(check(rule).allowed() ? "A" : "R");
    }
    return out;
  }

  /** Checks calls at the given offsets in seconds, asserting outcomes like "A@0.0", "R@1.5". */
  void assertEvents(Rule rule, String... events) {
    List<String> actual = new ArrayList<>();
    for (String event : events) {
      double t = Double.parseDouble(event.substring(2));
      at(t);
      actual.add((check(rule).allowed() ? "A" : "R") + "@" + event.substring(2));
    }
    assertThat(actual).containsExactly(events);
  }

  static Duration s(double seconds) {
    return Duration.ofNanos(Math.round(seconds * 1e9));
  }
}
