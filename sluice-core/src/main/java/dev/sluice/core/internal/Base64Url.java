package dev.sluice.core.internal;

/**
 * Base64url without padding (RFC 4648 section 5), read and compared in place: a cookie's MAC is
 * checked against its text without decoding it into an array ({@link #equalsBytes}).
 */
public final class Base64Url {

  private static final char[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".toCharArray();
  private static final byte[] VALUES = new byte[128];

  static {
    java.util.Arrays.fill(VALUES, (byte) -1);
    for (int i = 0; i < ALPHABET.length; i++) {
      VALUES[ALPHABET[i]] = (byte) i;
    }
  }

  private Base64Url() {}

  /** Characters of {@code n} bytes encoded without padding. */
  public static int length(int n) {
    return (n * 4 + 2) / 3;
  }

  /** Appends {@code n} bytes of {@code in} from {@code off}, encoded. */
  public static StringBuilder encode(byte[] in, int off, int n, StringBuilder out) {
    int i = off;
    int end = off + n;
    while (end - i >= 3) {
      int v = ((in[i] & 0xff) << 16) | ((in[i + 1] & 0xff) << 8) | (in[i + 2] & 0xff);
      out.append(ALPHABET[v >>> 18]).append(ALPHABET[(v >>> 12) & 63])
          .append(ALPHABET[(v >>> 6) & 63]).append(ALPHABET[v & 63]);
      i += 3;
    }
    if (end - i == 1) {
      int v = (in[i] & 0xff) << 16;
      out.append(ALPHABET[v >>> 18]).append(ALPHABET[(v >>> 12) & 63]);
    } else if (end - i == 2) {
      int v = ((in[i] & 0xff) << 16) | ((in[i + 1] & 0xff) << 8);
      out.append(ALPHABET[v >>> 18]).append(ALPHABET[(v >>> 12) & 63])
          .append(ALPHABET[(v >>> 6) & 63]);
    }
    return out;
  }

  public static String encode(byte[] in) {
    return encode(in, 0, in.length, new StringBuilder(length(in.length))).toString();
  }

  /**
   * Whether {@code s} from {@code from} is exactly the encoding of {@code n} bytes of {@code b}
   * (the canonical one: unused low bits zero). Reads every character whatever it finds, so the
   * time taken does not tell how much of a forged MAC was right.
   */
  public static boolean equalsBytes(CharSequence s, int from, int to, byte[] b, int off, int n) {
    if (to - from != length(n)) {
      return false;
    }
    int diff = 0;
    int acc = 0;
    int bits = 0;
    int j = off;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      int v = c < 128 ? VALUES[c] : -1;
      diff |= v >>> 31;   // 1 for an invalid character
      acc = (acc << 6) | (v & 63);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        diff |= ((acc >>> bits) & 0xff) ^ (b[j++] & 0xff);
      }
    }
    diff |= acc & ((1 << bits) - 1);   // padding bits must be zero
    return diff == 0;
  }

  /** Decodes {@code s}, or returns null when it is not base64url; for set-up, not hot paths. */
  public static byte[] decode(String s) {
    int n = s.length();
    if (n % 4 == 1) {
      return null;
    }
    byte[] out = new byte[n * 3 / 4];
    int acc = 0;
    int bits = 0;
    int j = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      int v = c < 128 ? VALUES[c] : -1;
      if (v < 0) {
        return null;
      }
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[j++] = (byte) (acc >>> bits);
      }
    }
    return j == out.length ? out : java.util.Arrays.copyOf(out, j);
  }
}
