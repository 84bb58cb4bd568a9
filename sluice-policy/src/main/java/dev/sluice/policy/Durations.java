package dev.sluice.policy;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;

/**
 * Durations and byte sizes as written in policy files: {@code 500ms}, {@code 60s}, {@code 1.5s},
 * {@code 10m}, {@code 1h}, {@code 1d}; sizes as bytes or with {@code KiB}, {@code MiB},
 * {@code GiB}. A bare number is not a duration: {@code 60} could mean seconds or milliseconds,
 * and guessing wrong is off by a factor of a thousand.
 */
public final class Durations {

  static final String EXPECTED = "a duration like 500ms, 60s, 1.5s, 10m, 1h or 1d";
  static final String POSITIVE_EXPECTED = "a duration > 0, like 500ms or 60s";
  static final String SIZE_EXPECTED = "a size in bytes, or like 64KiB, 1MiB";

  private Durations() {}

  /**
   * Parses a duration >= 0; throws {@link IllegalArgumentException} whose message is what was
   * expected.
   */
  public static Duration parse(String text) {
    Duration d = parseSigned(text);
    if (d.isNegative()) {
      throw new IllegalArgumentException("a duration >= 0, like 0s, 500ms or 60s");
    }
    return d;
  }

  /** Parses a duration > 0; a negative one is told the same as zero, both are wrong. */
  public static Duration parsePositive(String text) {
    Duration d = parseSigned(text);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(POSITIVE_EXPECTED);
    }
    return d;
  }

  /** Parses a duration of either sign, so each caller can say what range it wants. */
  static Duration parseSigned(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    int i = 0;
    while (i < t.length() && (Character.isDigit(t.charAt(i)) || t.charAt(i) == '.'
        || (i == 0 && (t.charAt(i) == '-' || t.charAt(i) == '+')))) {
      i++;
    }
    String number = t.substring(0, i).trim();
    String unit = t.substring(i).trim();
    long unitNanos;
    switch (unit) {
      case "ns": unitNanos = 1L; break;
      case "us": unitNanos = 1_000L; break;
      case "ms": unitNanos = 1_000_000L; break;
      case "s": unitNanos = 1_000_000_000L; break;
      case "m": unitNanos = 60_000_000_000L; break;
      case "h": unitNanos = 3_600_000_000_000L; break;
      case "d": unitNanos = 86_400_000_000_000L; break;
      default: throw new IllegalArgumentException(EXPECTED);
    }
    if (number.isEmpty()) {
      throw new IllegalArgumentException(EXPECTED);
    }
    BigDecimal nanos;
    try {
      nanos = new BigDecimal(number).multiply(BigDecimal.valueOf(unitNanos));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(EXPECTED);
    }
    if (nanos.abs().compareTo(BigDecimal.valueOf(Duration.ofDays(3653).toNanos())) > 0) {
      throw new IllegalArgumentException("a duration <= 3653d");
    }
    if (nanos.stripTrailingZeros().scale() > 0) {
      throw new IllegalArgumentException("a whole number of nanoseconds");
    }
    return Duration.ofNanos(nanos.longValueExact());
  }

  /** The shortest exact form: {@code 1m}, {@code 90s}, {@code 1500ms}, {@code 0s}. */
  public static String format(Duration d) {
    long n = d.toNanos();
    if (n == 0) {
      return "0s";
    }
    long[] units = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L,
        1_000_000L, 1_000L, 1L};
    String[] names = {"d", "h", "m", "s", "ms", "us", "ns"};
    for (int i = 0; i < units.length; i++) {
      if (n % units[i] == 0) {
        return (n / units[i]) + names[i];
      }
    }
    return n + "ns";
  }

  /** Parses a byte size: {@code 65536}, {@code 64KiB}, {@code 1MiB}, {@code 1GiB}. */
  public static long parseSize(String text) {
    String t = text.trim();
    long unit = 1;
    String number = t;
    String lower = t.toLowerCase(Locale.ROOT);
    if (lower.endsWith("kib")) {
      unit = 1L << 10;
    } else if (lower.endsWith("mib")) {
      unit = 1L << 20;
    } else if (lower.endsWith("gib")) {
      unit = 1L << 30;
    } else if (lower.endsWith("b") && !lower.endsWith("ib")) {
      number = t.substring(0, t.length() - 1);
    }
    if (unit != 1) {
      number = t.substring(0, t.length() - 3);
    }
    try {
      long n = Long.parseLong(number.trim());
      if (n < 0) {
        throw new IllegalArgumentException(SIZE_EXPECTED);
      }
      return Math.multiplyExact(n, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(SIZE_EXPECTED);
    }
  }

  /** The shortest exact form: {@code 64KiB}, {@code 1MiB}, {@code 1000}. */
  public static String formatSize(long bytes) {
    if (bytes != 0 && bytes % (1L << 30) == 0) {
      return (bytes >> 30) + "GiB";
    }
    if (bytes != 0 && bytes % (1L << 20) == 0) {
      return (bytes >> 20) + "MiB";
    }
    if (bytes != 0 && bytes % (1L << 10) == 0) {
      return (bytes >> 10) + "KiB";
    }
    return Long.toString(bytes);
  }
}
