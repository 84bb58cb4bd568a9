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
}
