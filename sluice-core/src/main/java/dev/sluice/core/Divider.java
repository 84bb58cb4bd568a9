package dev.sluice.core;

import java.math.BigInteger;

/**
 * Division of a non-negative long by a constant, as a multiply and a shift: a 64-bit divide
 * costs 15 to 40 cycles, more than the rest of a token-bucket decision (Granlund and Montgomery,
 * "Division by invariant integers using multiplication", 1994, theorem 4.2).
 *
 * <p>For a divisor {@code d} that is not a power of two, with {@code l = ceil(log2 d)} and
 * {@code m = floor(2^(63 + l) / d) + 1}: {@code 2^(63+l) < m d <= 2^(63+l) + d <= 2^(63+l) + 2^l},
 * so {@code floor(x m / 2^(63+l)) = floor(x / d)} for every {@code 0 <= x < 2^63}, and
 * {@code m < 2^64} fits in a long read as unsigned.
 */
final class Divider {

  private final long divisor;
  private final long magic;
  private final int shift;
  private final boolean powerOfTwo;

  Divider(long divisor) {
    if (divisor <= 0) {
      throw new IllegalArgumentException("divisor : " + divisor + " (expected: > 0)");
    }
    this.divisor = divisor;
    this.powerOfTwo = Long.bitCount(divisor) == 1;
    if (powerOfTwo) {
      this.shift = Long.numberOfTrailingZeros(divisor);
      this.magic = 0;
    } else {
      int l = 64 - Long.numberOfLeadingZeros(divisor - 1);
      this.shift = l - 1;
      this.magic = BigInteger.ONE.shiftLeft(63 + l).divide(BigInteger.valueOf(divisor))
          .add(BigInteger.ONE).longValue();
    }
  }

  /** {@code x / divisor} for {@code x >= 0}. */
  long divide(long x) {
    if (powerOfTwo) {
      return x >>> shift;
    }
    // The high half of the unsigned 128-bit product x * magic (x is non-negative).
    long high = Math.multiplyHigh(x, magic) + (magic < 0 ? x : 0);
    return high >>> shift;
  }

  long divisor() {
    return divisor;
  }
}
