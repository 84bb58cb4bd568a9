package dev.sluice.core.internal;

import dev.sluice.core.InvalidValueException;
import java.time.Duration;

/**
 * Argument checks whose exceptions name the parameter, the value and what was expected. Internal:
 * not exported by the module, not part of the API.
 */
public final class Checks {

  /** Largest window, period or ban we accept: 10 years keeps every nanosecond sum far from overflow. */
  public static final long MAX_NANOS = Duration.ofDays(3653).toNanos();

  /** Smallest window, period, decay or ban: below a millisecond a limit would never limit. */
  public static final long MIN_NANOS = 1_000_000L;

  /** Largest capacity we accept; counts stay in 31 bits so two fit in one long. */
  public static final long MAX_CAPACITY = Integer.MAX_VALUE;

  private Checks() {}

  /** The exception for {@code field : value (expected: expected)}. */
  public static InvalidValueException invalid(String field, Object value, String expected) {
    return new InvalidValueException(field, String.valueOf(value), expected);
  }

  public static long positive(long value, String name) {
    if (value <= 0) {
      throw invalid(name, value, "> 0");
    }
    return value;
  }

  public static double positive(double value, String name) {
    if (!(value > 0) || Double.isInfinite(value)) {
      throw invalid(name, value, "a finite number > 0");
    }
    return value;
  }

  public static long capacity(long value, String name) {
    positive(value, name);
    if (value > MAX_CAPACITY) {
      throw invalid(name, value, "<= " + MAX_CAPACITY);
    }
    return value;
  }

  /** A duration between 1 ms and 3653 days, in nanoseconds. */
  public static long duration(Duration value, String name) {
    if (value == null) {
      throw invalid(name, null, "a duration between 1ms and 3653 days");
    }
    if (value.compareTo(Duration.ofNanos(MIN_NANOS)) < 0) {
      throw invalid(name, value, ">= 1ms");
    }
    if (value.compareTo(Duration.ofNanos(MAX_NANOS)) > 0) {
      throw invalid(name, value, "<= 3653 days");
    }
    return value.toNanos();
  }

  public static <T> T notNull(T value, String name) {
    if (value == null) {
      throw invalid(name, null, "a value");
    }
    return value;
  }

  /** A name shown in headers, logs and keys: 1..128 printable ASCII characters, not blank. */
  public static String name(String value, String name) {
    notNull(value, name);
    if (value.isBlank() || value.length() > 128 || !isPrintableAscii(value)) {
      throw invalid(name, "\"" + value + "\"", "1..128 printable ASCII characters, not blank");
    }
    return value;
  }

  /** True when every character is printable ASCII (space to tilde). */
  public static boolean isPrintableAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < ' ' || c > '~') {
        return false;
      }
    }
    return true;
  }

  /** A key dimension's name: letters, digits, '-' or '_', starting with a letter, at most 64. */
  public static String dimension(String name) {
    if (!isDimension(name)) {
      throw invalid("dimension", "\"" + name + "\"",
          "letters, digits, '-' or '_', starting with a letter");
    }
    return name;
  }

  public static boolean isDimension(String s) {
    if (s == null || s.isEmpty() || s.length() > 64 || !Character.isLetter(s.charAt(0))) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_';
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
