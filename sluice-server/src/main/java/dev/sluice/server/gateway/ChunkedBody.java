package dev.sluice.server.gateway;

import io.netty.buffer.ByteBuf;

/**
 * Finds the end of a chunked body (RFC 9112, 7.1) in the bytes as they arrive, however the reads
 * cut them: chunk sizes, extensions, the data, the last chunk and the trailer section. The relay
 * forwards the bytes unchanged; this only counts them. Event loop only.
 */
final class ChunkedBody {

  private static final int SIZE = 0;
  private static final int EXTENSION = 1;
  private static final int DATA = 2;
  private static final int DATA_END = 3;
  private static final int TRAILER = 4;
  private static final int DONE = 5;

  private int chunkState;
  private long remaining;
  private int sizeDigits;
  private int trailerLine;

  /** Starts a new body. */
  void reset() {
    chunkState = SIZE;
    remaining = 0;
    sizeDigits = 0;
    trailerLine = 0;
  }

  /** Whether the body's last byte (the trailer section's empty line) has been read. */
  boolean done() {
    return chunkState == DONE;
  }

  /**
   * How many of the {@code n} bytes at {@code from} in {@code in} belong to the body; -1 when
   * the framing is broken.
   */
  int read(ByteBuf in, int from, int n) {
    int i = from;
    int end = from + n;
    while (i < end && chunkState != DONE) {
      if (chunkState == DATA) {
        int k = (int) Math.min(remaining, end - i);
        remaining -= k;
        i += k;
        if (remaining == 0) {
          chunkState = DATA_END;
          sizeDigits = 0;
        }
        continue;
      }
      byte c = in.getByte(i++);
      switch (chunkState) {
        case SIZE -> {
          int d = Character.digit(c, 16);
          if (d >= 0) {
            if (++sizeDigits > 15) {
              return -1;
            }
            remaining = remaining * 16 + d;
          } else if (c == ';' || c == ' ' || c == '\t') {
            chunkState = EXTENSION;
          } else if (c == '\n') {
            if (!sizeLineEnded()) {
              return -1;
            }
          } else if (c != '\r') {
            return -1;
          }
        }
        case EXTENSION -> {
          if (c == '\n' && !sizeLineEnded()) {
            return -1;
          }
        }
        case DATA_END -> {
          // CRLF after the data: two bytes.
          if (c == '\n') {
            chunkState = SIZE;
            remaining = 0;
            sizeDigits = 0;
          } else if (c != '\r') {
            return -1;
          }
        }
        case TRAILER -> {
          if (c == '\n') {
            if (trailerLine == 0) {
              chunkState = DONE;
            }
            trailerLine = 0;
          } else if (c != '\r') {
            trailerLine++;
          }
        }
        default -> {
          return -1;
        }
      }
    }
    return i - from;
  }

  /**
   * A chunk-size line ended: its data follows, or the trailer after the last (zero) chunk; false
   * when the line had no digits.
   */
  private boolean sizeLineEnded() {
    if (sizeDigits == 0) {
      return false;
    }
    chunkState = remaining == 0 ? TRAILER : DATA;
    trailerLine = 0;
    return true;
  }
}
