package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * A message head assembled in a reused array, then copied into one buffer: the relay writes a
 * head in a dozen small pieces, and a pooled direct buffer checks its bounds and capacity on each.
 * One per connection; event loop only.
 */
final class HeadWriter {

  private static final byte[] CRLF = {'\r', '\n'};

  private byte[] b = new byte[1024];
  private int n;

  HeadWriter reset() {
    n = 0;
    return this;
  }

  HeadWriter put(byte[] bytes) {
    return put(bytes, 0, bytes.length);
  }

  HeadWriter put(byte[] bytes, int from, int length) {
    ensure(length);
    System.arraycopy(bytes, from, b, n, length);
    n += length;
    return this;
  }

  /** Writes text as ISO-8859-1, as header values are read. */
  HeadWriter put(String s) {
    int length = s.length();
    ensure(length);
    for (int i = 0; i < length; i++) {
      b[n + i] = (byte) s.charAt(i);
    }
    n += length;
    return this;
  }

  /** Writes text as ISO-8859-1; an {@link io.netty.util.AsciiString} as its bytes. */
  HeadWriter put(CharSequence s) {
    if (s instanceof io.netty.util.AsciiString a) {
      return put(a.array(), a.arrayOffset(), a.length());
    }
    return put(s.toString());
  }

  /** A field line: {@code name: value} and CRLF. */
  HeadWriter field(String name, String value) {
    return put(name).put(": ").put(value).crlf();
  }

  /** Writes {@code v} in decimal. */
  HeadWriter putDecimal(long v) {
    if (v < 0) {
      return put(Long.toString(v));
    }
    int digits = 1;
    for (long x = v; x >= 10; x /= 10) {
      digits++;
    }
    ensure(digits);
    for (int i = n + digits - 1; i >= n; i--) {
      b[i] = (byte) ('0' + v % 10);
      v /= 10;
    }
    n += digits;
    return this;
  }

  HeadWriter crlf() {
    return put(CRLF, 0, 2);
  }

  int length() {
    return n;
  }

  /** The head in a new buffer of {@code alloc}. */
  ByteBuf toBuffer(ByteBufAllocator alloc) {
    ByteBuf out = alloc.buffer(n);
    writeTo(out);
    return out;
  }

  /** The bytes written, as a new array. */
  byte[] copy() {
    return java.util.Arrays.copyOf(b, n);
  }

  void writeTo(ByteBuf out) {
    out.writeBytes(b, 0, n);
  }

  private void ensure(int more) {
    if (n + more > b.length) {
      byte[] bigger = new byte[Math.max(b.length * 2, n + more)];
      System.arraycopy(b, 0, bigger, 0, n);
      b = bigger;
    }
  }

  /** Whether {@code b[start, end)} is {@code lower} in any ASCII case. */
  static boolean equalsLower(byte[] b, int start, int end, byte[] lower) {
    if (end - start != lower.length) {
      return false;
    }
    for (int k = 0; k < lower.length; k++) {
      int c = b[start + k];
      if (c >= 'A' && c <= 'Z') {
        c += 32;
      }
      if (c != lower[k]) {
        return false;
      }
    }
    return true;
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
