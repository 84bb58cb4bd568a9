package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;

/**
 * Finds where a request head ends in a buffer that grows as bytes arrive, looking at each byte
 * once: the scan goes on where the last one stopped.
 */
final class HeadEnd {

  /** No empty line yet. */
  static final int MISSING = -1;
  /** A line ended by a bare LF (not forwarded as bytes: the decoder reads it its own way). */
  static final int BARE_LF = -2;

  private int scanned;

  /** The index after the head's empty line in {@code in}; {@link #MISSING}; {@link #BARE_LF}. */
  int find(ByteBuf in) {
    int from = Math.max(in.readerIndex(), scanned);
    int to = in.writerIndex();
    scanned = Math.max(in.readerIndex(), to - 3);
    while (true) {
      int lf = in.indexOf(from, to, (byte) '\n');
      if (lf < 0) {
        return MISSING;
      }
      if (lf == in.readerIndex() || in.getByte(lf - 1) != '\r') {
        return BARE_LF;
      }
      if (lf - 3 >= in.readerIndex() && in.getByte(lf - 2) == '\n') {
        scanned = lf + 1;   // a pipelined head after this one is scanned from here
        return lf + 1;
      }
      from = lf + 1;
    }
  }

  /** The buffer's bytes moved {@code by} indexes down (copied into a new buffer from index 0). */
  void moved(int by) {
    scanned -= by;
  }

  /** A new buffer: scan it from its start. */
  void reset() {
    scanned = 0;
  }
}
