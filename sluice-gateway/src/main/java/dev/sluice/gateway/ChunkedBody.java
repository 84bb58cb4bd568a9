package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;

/**
 * Follows a chunked body (RFC 9112, 7.1) in the bytes as they arrive, however the reads cut them:
 * chunk sizes, extensions, the data, the last chunk and the trailer section. The relay forwards
 * the bytes unchanged; this only finds where the body ends, and whether its framing holds.
 *
 * <p>Request bodies are read {@linkplain #strict strictly}: every line ends with CRLF (a bare LF
 * or CR is where parsers disagree, the "chunk extension" and "TE.0" smuggling vectors), sizes are
 * hex digits only (at most 15), extensions hold no control characters and are at most
 * {@value #MAX_LINE} bytes; the trailer section is held to a header section's caps (at most
 * {@value RequestHead#MAX_FIELDS} fields, the header bytes cap in all) and its syntax (each line a
 * {@code name: value} field, no folding), so a request line sent straight after the last chunk
 * is a broken body, never a trailer. Upstream responses are read leniently (a bare LF ends a
 * line), as browsers do. Event loop only.
 */
final class ChunkedBody {

  static final int MAX_LINE = 4096;

  private static final int SIZE = 0;
  private static final int EXTENSION = 1;
  private static final int SIZE_LF = 2;
  private static final int DATA = 3;
  private static final int DATA_CR = 4;
  private static final int DATA_LF = 5;
  private static final int TRAILER = 6;
  private static final int TRAILER_LF = 7;
  private static final int DONE = 8;

  private final boolean strict;
  private int state;
  private long remaining;
  private int sizeDigits;
  private int lineBytes;
  private int trailerFields;
  private int trailerBytes;
  private int maxTrailerBytes = Integer.MAX_VALUE;
  /** In a trailer line, before its colon. */
  private boolean trailerName;

  private ChunkedBody(boolean strict) {
    this.strict = strict;
  }

  /** For request bodies: CRLF only, no control characters. */
  static ChunkedBody strict() {
    return new ChunkedBody(true);
  }

  /** For upstream responses: a bare LF ends a line too. */
  static ChunkedBody lenient() {
    return new ChunkedBody(false);
  }

  /** Starts a new body. */
  void reset() {
    state = SIZE;
    remaining = 0;
    sizeDigits = 0;
    lineBytes = 0;
    trailerFields = 0;
    trailerBytes = 0;
    trailerName = false;
  }

  /** Starts a new body whose trailer section may hold at most {@code maxBytes} bytes. */
  void reset(int maxBytes) {
    reset();
    maxTrailerBytes = maxBytes;
  }

  /** Whether the body's last byte (the trailer section's empty line) has been read. */
  boolean done() {
    return state == DONE;
  }

  /**
   * How many of the {@code n} bytes at {@code from} in {@code in} belong to the body; -1 when
   * the framing is broken. With {@code data}, the chunks' data bytes are copied there.
   */
  int read(ByteBuf in, int from, int n, ByteBuf data) {
    int i = from;
    int end = from + n;
    while (i < end && state != DONE) {
      if (state == DATA) {
        int k = (int) Math.min(remaining, end - i);
        if (data != null) {
          data.writeBytes(in, i, k);
        }
        remaining -= k;
        i += k;
        if (remaining == 0) {
          state = DATA_CR;
        }
        continue;
      }
      byte c = in.getByte(i++);
      switch (state) {
        case SIZE -> {
          int d = Character.digit(c, 16);
          if (d >= 0 && c < 0x80) {
            if (++sizeDigits > 15) {
              return -1;
            }
            remaining = remaining * 16 + d;
          } else if (c == ';' || (!strict && (c == ' ' || c == '\t'))) {
            state = EXTENSION;
            lineBytes = 0;
          } else if (c == '\r') {
            state = SIZE_LF;
          } else if (c == '\n' && !strict) {
            if (!sizeLineEnded()) {
              return -1;
            }
          } else {
            return -1;
          }
        }
        case EXTENSION -> {
          if (c == '\r') {
            state = SIZE_LF;
          } else if (c == '\n' && !strict) {
            if (!sizeLineEnded()) {
              return -1;
            }
          } else if (strict && ((c >= 0 && c < ' ' && c != '\t') || c == 0x7f
              || ++lineBytes > MAX_LINE)) {
            return -1;
          }
        }
        case SIZE_LF -> {
          if (c != '\n' || !sizeLineEnded()) {
            return -1;
          }
        }
        case DATA_CR -> {
          if (c == '\r') {
            state = DATA_LF;
          } else if (c == '\n' && !strict) {
            nextChunk();
          } else {
            return -1;
          }
        }
        case DATA_LF -> {
          if (c != '\n') {
            return -1;
          }
          nextChunk();
        }
        case TRAILER -> {
          if (c == '\r') {
            if (strict && trailerName && lineBytes > 0) {
              return -1;   // a line without a colon: not a field
            }
            state = TRAILER_LF;
          } else if (c == '\n' && !strict) {
            trailerLineEnded();
          } else if (strict && !trailerByte(c)) {
            return -1;
          } else if (!strict) {
            lineBytes++;
          }
        }
        case TRAILER_LF -> {
          if (c != '\n') {
            return -1;
          }
          trailerLineEnded();
        }
        default -> {
          return -1;
        }
      }
    }
    return i - from;
  }

  private void nextChunk() {
    state = SIZE;
    remaining = 0;
    sizeDigits = 0;
  }

  /** One byte of a strict trailer line; false when it breaks the field syntax or the caps. */
  private boolean trailerByte(byte c) {
    if (++lineBytes > MAX_LINE || ++trailerBytes > maxTrailerBytes) {
      return false;
    }
    if (lineBytes == 1) {
      if (c == ' ' || c == '\t' || ++trailerFields > RequestHead.MAX_FIELDS) {
        return false;   // obsolete line folding, or too many fields
      }
      trailerName = true;
    }
    if (trailerName) {
      if (c == ':') {
        trailerName = false;
        return lineBytes > 1;
      }
      return isTokenChar(c);
    }
    return (c < 0 || c >= ' ' || c == '\t') && c != 0x7f;
  }

  /** RFC 9110's tchar. */
  private static boolean isTokenChar(byte c) {
    if (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
      return true;
    }
    return c > ' ' && c < 0x7f && "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }

  private void trailerLineEnded() {
    state = lineBytes == 0 ? DONE : TRAILER;
    lineBytes = 0;
    trailerName = false;
  }

  /**
   * A chunk-size line ended: its data follows, or the trailer after the last (zero) chunk; false
   * when the line had no digits.
   */
  private boolean sizeLineEnded() {
    if (sizeDigits == 0) {
      return false;
    }
    state = remaining == 0 ? TRAILER : DATA;
    lineBytes = 0;
    return true;
  }
}
