package dev.sluice.server.replay;

/** 64-bit hashes of bytes and strings (FNV-1a, then a finaliser that spreads the bits). */
final class Hashes {

  private Hashes() {}

  static long of(byte[] b, int s, int e) {
    long h = 0xcbf29ce484222325L;
    for (int i = s; i < e; i++) {
      h = (h ^ (b[i] & 0xff)) * 0x100000001b3L;
    }
    return mix(h);
  }

  /** The same value as {@link #of(byte[], int, int)} for ASCII text. */
  static long of(String s) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        h = (h ^ c) * 0x100000001b3L;
      } else {
        h = (h ^ (c & 0xff)) * 0x100000001b3L;
        h = (h ^ (c >>> 8)) * 0x100000001b3L;
      }
    }
    return mix(h);
  }

  private static final java.lang.invoke.VarHandle LONGS = java.lang.invoke.MethodHandles
      .byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

  /**
   * A 64-bit hash of {@code b[s, e)} eight bytes at a time, for telling values apart (user
   * agents): a multiply per word, where {@link #of(byte[], int, int)} needs one per byte (a
   * chain of 100 multiplies is about 100 ns).
   */
  static long words(byte[] b, int s, int e) {
    long h = 0x9e3779b97f4a7c15L ^ (e - s);
    int i = s;
    for (; i + 8 <= e; i += 8) {
      h = Long.rotateLeft((h ^ (long) LONGS.get(b, i)) * 0xbf58476d1ce4e5b9L, 29);
    }
    long w = 0;
    for (int shift = 0; i < e; i++, shift += 8) {
      w |= (b[i] & 0xffL) << shift;
    }
    return mix(h ^ w);
  }

  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
