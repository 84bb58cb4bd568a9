package dev.sluice.core;

import java.time.Duration;

/** Argument checks whose messages name the parameter, the value and what was expected. */
final class Checks {

  /** Largest window, period or ban we accept: 10 years keeps every nanosecond sum far from overflow. */
  static final long MAX_NANOS = Duration.ofDays(3653).toNanos();

  /** Largest capacity we accept; counts stay in 31 bits so two fit in one long. */
  static final long MAX_CAPACITY = Integer.MAX_VALUE;

  private Checks() {}

  static long positive(long value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " : " + value + " (expected: > 0)");
    }
    return value;
  }

  static double positive(double value, String name) {
    if (!(value > 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + " : " + value + " (expected: a finite number > 0)");
    }
    return value;
  }

  static long capacity(long value, String name) {
    positive(value, name);
    if (value > MAX_CAPACITY) {
      throw new IllegalArgumentException(
          name + " : " + value + " (expected: <= " + MAX_CAPACITY + ")");
    }
    return value;
  }

  static long duration(Duration value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " : null (expected: a positive duration)");
    }
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " : " + value + " (expected: > 0)");
    }
    if (value.compareTo(Duration.ofNanos(MAX_NANOS)) > 0) {
      throw new IllegalArgumentException(name + " : " + value + " (expected: <= 3653 days)");
    }
    return value.toNanos();
  }

  static <T> T notNull(T value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " : null (expected: a value)");
    }
    return value;
  }

  static String name(String value, String name) {
    notNull(value, name);
    if (value.isBlank() || value.length() > 128) {
      throw new IllegalArgumentException(
          name + " : \"" + value + "\" (expected: 1..128 non-blank characters)");
    }
    return value;
  }
}
