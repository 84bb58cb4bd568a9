package dev.sluice.server.replay;

/**
 * A log format: reads one line's bytes into a {@link LogRecord}. Implementations are immutable
 * and shared by threads; all per-line state lives in the record.
 */
interface LineFormat {

  /**
   * Parses {@code buf[start, end)} (one line, without its line end) into {@code r}, which was
   * reset for it; false, with {@code r.error} set to why, when the line is not in this format.
   */
  boolean parse(byte[] buf, int start, int end, LogRecord r);

  /** The field whose value partitions lines by client, read by {@link #partitionHash}. */
  default Field clientField() {
    return Field.ADDR;
  }

  /**
   * A hash of the line's client, read with as little parsing as the format allows; the default
   * parses the whole line. 0 when the line does not parse.
   */
  default long partitionHash(byte[] buf, int start, int end, LogRecord scratch) {
    scratch.reset(buf);
    if (!parse(buf, start, end, scratch)) {
      return 0;
    }
    Field f = scratch.has(Field.PEER) ? Field.PEER : clientField();
    return scratch.hash(f);
  }

  /** How the format is named on the command line and in reports. */
  String name();
}
