package dev.sluice.server.replay;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Byte searches eight bytes at a time (SWAR), for line ends and field delimiters. */
final class Bytes {

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;

  private Bytes() {}

  /** The eight bytes at {@code b[i, i + 8)} as one little-endian word. */
  static long word(byte[] b, int i) {
    return (long) LONGS.get(b, i);
  }

  /** The first index of {@code c} in {@code b[from, to)}, or -1. */
  static int indexOf(byte[] b, int from, int to, byte c) {
    long pattern = (c & 0xffL) * ONES;
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long w = (long) LONGS.get(b, i) ^ pattern;
      // A zero byte of w is a match; the lowest flagged byte is the first (little-endian).
      long found = (w - ONES) & ~w & HIGHS;
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (b[i] == c) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The IPv4 address written as a plain dotted quad at {@code b[s, e)} (four parts of one to
   * three digits, none above 255, no leading zero), as an unsigned 32-bit value; -1 for
   * anything else.
   */
  static long dottedQuad(byte[] b, int s, int e) {
    if (e - s < 7 || e - s > 15) {
      return -1;
    }
    long v = 0;
    int i = s;
    for (int part = 0; part < 4; part++) {
      if (part > 0) {
        if (i >= e || b[i] != '.') {
          return -1;
        }
        i++;
      }
      int start = i;
      int value = 0;
      while (i < e && i - start < 3 && b[i] >= '0' && b[i] <= '9') {
        value = value * 10 + (b[i] - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || value > 255 || (digits > 1 && b[start] == '0')) {
        return -1;
      }
      v = v << 8 | value;
    }
    return i == e ? v : -1;
  }
}
