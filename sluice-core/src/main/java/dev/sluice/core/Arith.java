package dev.sluice.core;

import java.math.BigInteger;

/** Exact {@code a * b / c} for non-negative operands, without overflow. */
final class Arith {

  private Arith() {}

  static long mulDivFloor(long a, long b, long c) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    if (hi == 0 && lo >= 0) {
      return lo / c;
    }
    return BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(c))
        .longValueExact();
  }

  static long mulDivCeil(long a, long b, long c) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    if (hi == 0 && lo >= 0) {
      return -Math.floorDiv(-lo, c);
    }
    BigInteger[] qr = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b))
        .divideAndRemainder(BigInteger.valueOf(c));
    return qr[0].longValueExact() + (qr[1].signum() > 0 ? 1 : 0);
  }
}
