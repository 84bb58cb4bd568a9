package dev.sluice.core.internal;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SHA-256 that allocates nothing once made, for the challenge's hot path: a clearance cookie is
 * checked on every request of a cleared client past its limit. The JDK's {@code MessageDigest}
 * does the compressing (HotSpot runs it on the CPU's SHA instructions where there are some: a
 * hand-written compression measured 1.4 us for an HMAC where this takes a fraction), fed from
 * a buffer of this instance and read into the caller's array, which allocate nothing; only
 * {@code Mac.doFinal} and {@code MessageDigest.digest()} would. One instance per thread.
 */
public final class Sha256 {

  public static final int BLOCK = 64;
  public static final int LENGTH = 32;

  private final MessageDigest md;
  /** Input gathered between calls to the digest: one call for many small updates. */
  private final byte[] buf = new byte[256];
  private final byte[] out = new byte[LENGTH];
  private int n;

  public Sha256() {
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  /** Starts a new message. */
  public Sha256 reset() {
    md.reset();
    n = 0;
    return this;
  }

  public Sha256 update(byte b) {
    if (n == buf.length) {
      flush();
    }
    buf[n++] = b;
    return this;
  }

  public Sha256 update(byte[] in, int off, int len) {
    if (len > buf.length - n) {
      flush();
      md.update(in, off, len);
      return this;
    }
    System.arraycopy(in, off, buf, n, len);
    n += len;
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

  /** Ends the message: its 32-byte digest into {@code out} at {@code off}; then {@link #reset}. */
  public void digest(byte[] into, int off) {
    flush();
    try {
      md.digest(into, off, LENGTH);
    } catch (DigestException e) {
      throw new IllegalArgumentException("digest : " + (into.length - off) + " bytes of room "
          + "(expected: 32)", e);
    }
  }

  /** The digest's first 32 bits, most significant first (a proof of work reads its zeros); resets. */
  public int digestFirstInt() {
    digest(out, 0);
    return ((out[0] & 0xff) << 24) | ((out[1] & 0xff) << 16) | ((out[2] & 0xff) << 8)
        | (out[3] & 0xff);
  }

  private void flush() {
    if (n > 0) {
      md.update(buf, 0, n);
      n = 0;
    }
  }

  /** The digest of {@code in}, for tests and set-up: allocates. */
  public static byte[] of(byte[] in) {
    byte[] d = new byte[LENGTH];
    new Sha256().update(in, 0, in.length).digest(d, 0);
    return d;
  }
}
