package dev.sluice.server.replay;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One parsed log line, reused from line to line: each field is a slice of the line's bytes (or,
 * for JSON, a decoded string), so a line the replay skips costs no string at all.
 */
final class LogRecord {

  private static final int N = Field.ALL.length;

  byte[] buf;
  final int[] start = new int[N];
  final int[] end = new int[N];
  final String[] text = new String[N];
  /** Microseconds since the epoch; Long.MIN_VALUE when the line had no time. */
  long micros;
  /** {@link Field#DURATION}, in microseconds; 0 when the line has none. */
  long durationMicros;
  int status;
  boolean websocket;
  /** 1-based line number in its input, and which input. */
  long line;
  int input;
  /** Why the line did not parse (a constant), or null. */
  String error;
  /**
   * The last nginx time read into this record and its value, kept across lines: a log's lines
   * mostly share their second's text, so the next line compares 26 bytes instead of parsing.
   */
  private long clfA;
  private long clfB;
  private long clfC;
  private int clfD;
  private long clfMicros = Long.MIN_VALUE;

  /** {@code dd/MMM/yyyy:HH:mm:ss ±hhmm} at {@code b[s, e)}: microseconds, or Times.BAD. */
  long clf(byte[] b, int s, int e) {
    if (e - s != 26) {
      return Times.clf(b, s, e);
    }
    long x = Bytes.word(b, s);
    long y = Bytes.word(b, s + 8);
    long z = Bytes.word(b, s + 16);
    int w = (b[s + 24] & 0xff) | (b[s + 25] & 0xff) << 8;
    if (clfMicros != Long.MIN_VALUE && x == clfA && y == clfB && z == clfC && w == clfD) {
      return clfMicros;
    }
    long t = Times.clf(b, s, e);
    clfA = x;
    clfB = y;
    clfC = z;
    clfD = w;
    clfMicros = t == Times.BAD ? Long.MIN_VALUE : t;
    return t;
  }

  void reset(byte[] b) {
    buf = b;
    // text[i] is reset by each set(); has() and get() read it only where start[i] >= 0.
    Arrays.fill(start, -1);
    micros = Long.MIN_VALUE;
    durationMicros = 0;
    status = 0;
    websocket = false;
    error = null;
  }

  void set(Field f, int s, int e) {
    start[f.ordinal()] = s;
    end[f.ordinal()] = e;
    text[f.ordinal()] = null;
  }

  void set(Field f, String value) {
    start[f.ordinal()] = value == null ? -1 : 0;
    end[f.ordinal()] = 0;
    text[f.ordinal()] = value;
  }

  /** True when the field is there and not nginx's {@code -} for "none". */
  boolean has(Field f) {
    int i = f.ordinal();
    if (start[i] < 0) {
      return false;
    }
    if (text[i] != null) {
      return !text[i].isEmpty();
    }
    int len = end[i] - start[i];
    return len > 0 && !(len == 1 && buf[start[i]] == '-');
  }

  /** The field's text (nginx's {@code \xHH} escapes decoded), or null when absent. */
  String get(Field f) {
    if (!has(f)) {
      return null;
    }
    int i = f.ordinal();
    if (text[i] == null) {
      text[i] = decode(buf, start[i], end[i]);
    }
    return text[i];
  }

  /** The field's bytes equal {@code ascii} (no string made). */
  boolean is(Field f, byte[] ascii) {
    int i = f.ordinal();
    if (start[i] < 0) {
      return false;
    }
    if (text[i] != null) {
      return text[i].equals(new String(ascii, StandardCharsets.US_ASCII));
    }
    return Arrays.equals(buf, start[i], end[i], ascii, 0, ascii.length);
  }

  /**
   * A cheap 64-bit hash of the field for telling values apart (user agents): its length, first
   * 48 and last 16 bytes.
   */
  long sketch(Field f) {
    int i = f.ordinal();
    if (start[i] < 0) {
      return 0;
    }
    if (text[i] != null) {
      byte[] bytes = text[i].getBytes(StandardCharsets.UTF_8);
      return sketch(bytes, 0, bytes.length);
    }
    return sketch(buf, start[i], end[i]);
  }

  private static long sketch(byte[] b, int s, int e) {
    if (e - s <= 64) {
      return Hashes.words(b, s, e);
    }
    return Hashes.words(b, s, s + 48) ^ Hashes.words(b, e - 16, e) * 31 ^ (e - s);
  }

  /** A 64-bit hash of the field's bytes, for partitioning and client tables. */
  long hash(Field f) {
    int i = f.ordinal();
    if (start[i] < 0) {
      return 0;
    }
    if (text[i] != null) {
      return Hashes.of(text[i]);
    }
    return Hashes.of(buf, start[i], end[i]);
  }

  static String decode(byte[] b, int s, int e) {
    int bs = -1;
    for (int i = s; i < e; i++) {
      if (b[i] == '\\' || b[i] < 0) {
        bs = i;
        break;
      }
    }
    if (bs < 0) {
      return new String(b, s, e - s, StandardCharsets.ISO_8859_1);
    }
    // nginx writes bytes outside printable ASCII, '"' and '\' as \xHH.
    byte[] out = new byte[e - s];
    int n = 0;
    for (int i = s; i < e; i++) {
      if (b[i] == '\\' && i + 3 < e && b[i + 1] == 'x'
          && hex(b[i + 2]) >= 0 && hex(b[i + 3]) >= 0) {
        out[n++] = (byte) (hex(b[i + 2]) * 16 + hex(b[i + 3]));
        i += 3;
      } else {
        out[n++] = b[i];
      }
    }
    return new String(out, 0, n, StandardCharsets.UTF_8);
  }

  /** The value of ASCII hex digit {@code c} (no other script's digits), or -1. */
  private static int hex(byte c) {
    return HexFormat.isHexDigit(c) ? HexFormat.fromHexDigit(c) : -1;
  }
}
