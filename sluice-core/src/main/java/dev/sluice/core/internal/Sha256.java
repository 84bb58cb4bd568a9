package dev.sluice.core.internal;

/**
 * SHA-256 (FIPS 180-4) that allocates nothing once made, written here for the challenge's hot
 * path: a clearance cookie is checked on every request of a cleared client past its limit, and
 * the JDK's {@code Mac.doFinal} allocates two arrays a call. One instance per thread; reuse it.
 *
 * <p>Besides whole messages it resumes from a midstate ({@link #resume}): an HMAC key's inner
 * and outer pads are compressed once ({@link HmacKey}), so an HMAC of a message under 56 bytes
 * costs two compressions, not four.
 */
public final class Sha256 {

  /** The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
  private static final int[] K = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};

  /** The first 32 bits of the fractional parts of the square roots of the first 8 primes. */
  private static final int[] IV = {
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
      0x5be0cd19};

  public static final int BLOCK = 64;
  public static final int LENGTH = 32;

  private final int[] h = new int[8];
  private final int[] w = new int[64];
  private final byte[] block = new byte[BLOCK];
  private int fill;
  private long bytes;

  public Sha256() {
    reset();
  }

  /** Starts a new message. */
  public Sha256 reset() {
    System.arraycopy(IV, 0, h, 0, 8);
    fill = 0;
    bytes = 0;
    return this;
  }

  /** Goes on from {@code midstate}, the state after {@code absorbed} bytes (a multiple of 64). */
  public Sha256 resume(int[] midstate, long absorbed) {
    System.arraycopy(midstate, 0, h, 0, 8);
    fill = 0;
    bytes = absorbed;
    return this;
  }

  /** The state so far into {@code out}; only between whole blocks (after 0, 64, 128... bytes). */
  public void midstate(int[] out) {
    if (fill != 0) {
      throw new IllegalStateException("midstate : after " + bytes + " bytes (expected: whole "
          + "blocks of 64)");
    }
    System.arraycopy(h, 0, out, 0, 8);
  }

  public Sha256 update(byte b) {
    block[fill++] = b;
    bytes++;
    if (fill == BLOCK) {
      compress(block, 0);
      fill = 0;
    }
    return this;
  }

  public Sha256 update(byte[] in, int off, int len) {
    for (int i = 0; i < len; i++) {
      update(in[off + i]);
    }
    return this;
  }

  /** The characters {@code from..to} of {@code s}, each taken as one byte (ASCII text). */
  public Sha256 updateAscii(CharSequence s, int from, int to) {
    for (int i = from; i < to; i++) {
      update((byte) s.charAt(i));
    }
    return this;
  }

  /** {@code v} as 8 bytes, most significant first. */
  public Sha256 updateLong(long v) {
    for (int i = 56; i >= 0; i -= 8) {
      update((byte) (v >>> i));
    }
    return this;
  }

  /** {@code v} as 4 bytes, most significant first. */
  public Sha256 updateInt(int v) {
    for (int i = 24; i >= 0; i -= 8) {
      update((byte) (v >>> i));
    }
    return this;
  }

  /** Ends the message: its 32-byte digest into {@code out} at {@code off}; then {@link #reset}. */
  public void digest(byte[] out, int off) {
    long bits = bytes << 3;
    update((byte) 0x80);
    while (fill != 56) {
      update((byte) 0);
    }
    for (int i = 56; i >= 0; i -= 8) {
      update((byte) (bits >>> i));
    }
    for (int i = 0; i < 8; i++) {
      int v = h[i];
      out[off + 4 * i] = (byte) (v >>> 24);
      out[off + 4 * i + 1] = (byte) (v >>> 16);
      out[off + 4 * i + 2] = (byte) (v >>> 8);
      out[off + 4 * i + 3] = (byte) v;
    }
    reset();
  }

  /** The digest's first 32 bits, most significant first (a proof of work reads its zeros); resets. */
  public int digestFirstInt() {
    long bits = bytes << 3;
    update((byte) 0x80);
    while (fill != 56) {
      update((byte) 0);
    }
    for (int i = 56; i >= 0; i -= 8) {
      update((byte) (bits >>> i));
    }
    int first = h[0];
    reset();
    return first;
  }

  /** The digest of {@code in}, for tests and set-up: allocates. */
  public static byte[] of(byte[] in) {
    byte[] out = new byte[LENGTH];
    new Sha256().update(in, 0, in.length).digest(out, 0);
    return out;
  }

  private void compress(byte[] b, int off) {
    int[] w = this.w;
    for (int t = 0; t < 16; t++) {
      int i = off + 4 * t;
      w[t] = (b[i] << 24) | ((b[i + 1] & 0xff) << 16) | ((b[i + 2] & 0xff) << 8)
          | (b[i + 3] & 0xff);
    }
    for (int t = 16; t < 64; t++) {
      int x = w[t - 2];
      int y = w[t - 15];
      int s1 = Integer.rotateRight(x, 17) ^ Integer.rotateRight(x, 19) ^ (x >>> 10);
      int s0 = Integer.rotateRight(y, 7) ^ Integer.rotateRight(y, 18) ^ (y >>> 3);
      w[t] = s1 + w[t - 7] + s0 + w[t - 16];
    }
    int a = h[0];
    int bb = h[1];
    int c = h[2];
    int d = h[3];
    int e = h[4];
    int f = h[5];
    int g = h[6];
    int hh = h[7];
    for (int t = 0; t < 64; t++) {
      int s1 = Integer.rotateRight(e, 6) ^ Integer.rotateRight(e, 11) ^ Integer.rotateRight(e, 25);
      int ch = (e & f) ^ (~e & g);
      int t1 = hh + s1 + ch + K[t] + w[t];
      int s0 = Integer.rotateRight(a, 2) ^ Integer.rotateRight(a, 13) ^ Integer.rotateRight(a, 22);
      int maj = (a & bb) ^ (a & c) ^ (bb & c);
      int t2 = s0 + maj;
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = bb;
      bb = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += bb;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
}
