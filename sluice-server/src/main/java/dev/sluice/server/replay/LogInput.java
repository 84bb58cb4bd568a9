package dev.sluice.server.replay;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * One log: a file (gzip when it starts with gzip's magic bytes, whatever its name) or standard
 * input, read in 1 MiB blocks and cut into lines without copying them. A line longer than
 * {@link #MAX_LINE} is skipped and counted, so memory stays bounded whatever the input.
 */
final class LogInput implements Closeable {

  static final int MAX_LINE = 64 * 1024;
  private static final int BLOCK = 1 << 20;
  /** The size of the buffer a log is read into. */
  static final int BUFFER = BLOCK + MAX_LINE;

  /**
   * Where a split read takes the buffer it reads on into, when the one it read from has no room
   * left: that one is then the caller's, with the lines cut in it, which stay valid.
   */
  interface Buffers {
    byte[] next();
  }

  /** An input that could not be read: names it, the line and the cause. */
  static final class InputException extends Exception {
    private static final long serialVersionUID = 1L;

    InputException(String message) {
      super(message);
    }
  }

  final String name;
  final int index;
  private final InputStream in;
  private final Counting counted;
  /** The input's size in bytes (compressed for gzip), or -1 when not known (standard input). */
  final long size;
  final boolean gzip;
  private LineFormat format;
  private final Problems problems;
  private final int partition;
  private final int partitions;
  private final LogRecord scratch = new LogRecord();
  private byte[] buf = new byte[BUFFER];
  /** Null: the buffer is reused, its unread bytes moved to its start. */
  private Buffers buffers;
  private int pos;
  private int lim;
  private boolean eof;
  private long line;
  /** The line {@link #nextLine} found. */
  int lineStart;
  int lineEnd;
  /** Lines of other partitions, skipped. */
  long skipped;

  private LogInput(String name, int index, InputStream raw, long size, LineFormat format,
      Problems problems, int partition, int partitions) throws IOException {
    this.name = name;
    this.index = index;
    this.size = size;
    this.counted = new Counting(raw);
    BufferedInputStream peek = new BufferedInputStream(counted, 2);
    peek.mark(2);
    int b1 = peek.read();
    int b2 = peek.read();
    peek.reset();
    this.gzip = b1 == 0x1f && b2 == 0x8b;
    this.in = gzip ? new GZIPInputStream(peek, 64 * 1024) : peek;
    this.format = format;
    this.problems = problems;
    this.partition = partition;
    this.partitions = partitions;
  }

  /** Opens {@code name} ({@code -} is {@code stdin}); format null detects it from the first line. */
  static LogInput open(String name, int index, InputStream stdin, LineFormat format,
      Problems problems, int partition, int partitions) throws InputException {
    try {
      if (name.equals("-")) {
        return new LogInput("<stdin>", index, stdin, -1, format, problems, partition,
            partitions);
      }
      Path p = Path.of(name);
      if (Files.isDirectory(p)) {
        throw new InputException(name + ": is a directory (expected: a log file)");
      }
      return new LogInput(name, index, Files.newInputStream(p), Files.size(p), format, problems,
          partition, partitions);
    } catch (NoSuchFileException e) {
      throw new InputException(name + ": no such file");
    } catch (IOException e) {
      throw new InputException(name + ": cannot read (" + e.getMessage() + ")");
    }
  }

  /** Bytes read from the file so far (compressed bytes for gzip). */
  long position() {
    return counted.count;
  }

  long lines() {
    return line;
  }

  LineFormat format() {
    return format;
  }

  /**
   * The next line of this partition that parses, in {@code r}; false at the end. Lines that do
   * not parse are counted in the problems and skipped.
   */
  boolean next(LogRecord r) throws InputException {
    while (nextLine()) {
      int s = lineStart;
      int e = lineEnd;
      if (partitions > 1) {
        long h = format.partitionHash(buf, s, e, scratch);
        if (h != 0 && Math.floorMod(h, partitions) != partition) {
          skipped++;
          continue;
        }
        if (h == 0 && partition != 0) {
          // A line that does not parse is reported once, by partition 0.
          skipped++;
          continue;
        }
      }
      r.reset(buf);
      r.line = line;
      r.input = index;
      if (format.parse(buf, s, e, r)) {
        return true;
      }
      problems.bad(name, line, r.error, buf, s, e);
    }
    return false;
  }

  /**
   * The next non-empty line of at most {@link #MAX_LINE} bytes, unparsed: {@code buf[lineStart,
   * lineEnd)}, valid until the next call, its number {@link #lines()}; false at the end. The
   * format is known once it returned true (detected from the first line when not given).
   */
  boolean nextLine() throws InputException {
    while (true) {
      int nl = Bytes.indexOf(buf, pos, lim, (byte) '\n');
      if (nl < 0) {
        if (lim - pos > MAX_LINE) {
          skipLongLine();
          continue;
        }
        if (eof) {
          if (pos >= lim) {
            return false;
          }
          nl = lim;
        } else {
          fill();
          continue;
        }
      }
      int s = pos;
      int e = nl;
      pos = Math.min(nl + 1, lim);
      if (nl == lim) {
        pos = lim;
      }
      line++;
      if (e > s && buf[e - 1] == '\r') {
        e--;
      }
      if (e == s) {
        continue;
      }
      if (e - s > MAX_LINE) {
        problems.bad(name, line, "line longer than " + MAX_LINE + " bytes, skipped", buf, s,
            s + 80);
        continue;
      }
      if (format == null) {
        format = Formats.detect(buf, s, e);
        if (format == null) {
          throw new InputException(name + ":" + line + ": not in a format replay knows (expected: "
              + Formats.USAGE + "; give --format)");
        }
      }
      lineStart = s;
      lineEnd = e;
      return true;
    }
  }

  /** The bytes {@link #lineStart} and {@link #lineEnd} index. */
  byte[] buffer() {
    return buf;
  }

  /**
   * Reads on into buffers from {@code buffers} (of at least {@link #MAX_LINE} bytes and more
   * than the longest line), never over a line it cut: a line stays where it was cut until its
   * buffer is given back.
   */
  void readInto(Buffers buffers) {
    this.buffers = buffers;
  }

  /** The line's client partition of {@code partitions}, or -1 when the line does not parse. */
  int partitionOf(int partitions) {
    long h = format.partitionHash(buf, lineStart, lineEnd, scratch);
    return h == 0 ? -1 : Math.floorMod(h, partitions);
  }

  private void skipLongLine() throws InputException {
    line++;
    problems.bad(name, line, "line longer than " + MAX_LINE + " bytes, skipped", buf, pos,
        pos + 80);
    // Drop what is buffered, then read on to the next line end.
    while (true) {
      pos = lim;
      fill();
      for (int i = pos; i < lim; i++) {
        if (buf[i] == '\n') {
          pos = i + 1;
          return;
        }
      }
      if (eof) {
        pos = lim;
        return;
      }
    }
  }

  private void fill() throws InputException {
    if (pos > 0) {
      byte[] to = buffers == null ? buf : buffers.next();
      System.arraycopy(buf, pos, to, 0, lim - pos);
      buf = to;
      lim -= pos;
      pos = 0;
    }
    try {
      while (lim < buf.length) {
        int n = in.read(buf, lim, buf.length - lim);
        if (n < 0) {
          eof = true;
          return;
        }
        lim += n;
        if (lim - pos >= BLOCK) {
          return;
        }
      }
    } catch (EOFException e) {
      throw new InputException(name + ":" + (line + 1) + ": truncated gzip stream ("
          + e.getMessage() + "); " + line + " lines were read before it");
    } catch (ZipException e) {
      throw new InputException(name + ":" + (line + 1) + ": corrupt gzip stream ("
          + e.getMessage() + "); " + line + " lines were read before it");
    } catch (IOException e) {
      throw new InputException(name + ":" + (line + 1) + ": cannot read (" + e.getMessage()
          + ")");
    }
  }

  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException e) {
      // read-only; nothing to lose
    }
  }

  /** Counts the bytes read from the file, for the progress bar. */
  private static final class Counting extends FilterInputStream {
    volatile long count;

    Counting(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        count++;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      if (n > 0) {
        count += n;
      }
      return n;
    }
  }
}
