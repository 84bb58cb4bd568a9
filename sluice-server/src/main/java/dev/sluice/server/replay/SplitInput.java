package dev.sluice.server.replay;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * One log read once for several partitions: each line is cut and its client's partition found
 * once, then copied into that partition's chunk of lines, which its thread parses and decides.
 * (Reading the log in every partition's thread cost each thread a line cut and a partition hash
 * for every other partition's line: with two threads, as much work skipping as parsing.)
 *
 * <p>There is no reader thread: a partition whose chunks ran out reads for all, until a chunk of
 * its own is ready, while the others go on with theirs. A partition holds at most
 * {@value #QUEUED} full chunks waiting; a reader that would pass that waits for the partition to
 * take one, which it can (it has chunks, so it does not wait to read), so memory stays bounded
 * (about {@value #QUEUED} + 2 chunks of {@value #BYTES} bytes a partition) and no two threads
 * wait on each other. A partition that stops early (it failed) is closed: its lines are dropped.
 */
final class SplitInput {

  static final int BYTES = 1 << 19;
  static final int LINES = 2048;
  static final int QUEUED = 4;

  /** Lines of one partition, copied out of the log. */
  static final class Chunk {
    final byte[] data;
    final int[] start;
    final int[] end;
    final long[] number;
    int count;
    int used;

    Chunk(int bytes, int lines) {
      data = new byte[bytes];
      start = new int[lines];
      end = new int[lines];
      number = new long[lines];
    }

    boolean fits(int length) {
      return count < start.length && data.length - used >= length;
    }

    void add(byte[] b, int s, int e, long line) {
      int n = e - s;
      System.arraycopy(b, s, data, used, n);
      start[count] = used;
      end[count] = used + n;
      number[count] = line;
      used += n;
      count++;
    }
  }

  private final LogInput in;
  private final int partitions;
  private final int bytes;
  private final int lines;
  private final int maxQueued;
  private final ArrayDeque<Chunk>[] queued;
  private final Chunk[] open;
  private final boolean[] closed;
  private final ArrayDeque<Chunk> free = new ArrayDeque<>();
  private boolean reading;
  private boolean eof;
  private LogInput.InputException failure;

  SplitInput(LogInput in, int partitions) {
    this(in, partitions, BYTES, LINES, QUEUED);
  }

  /** With chunks of {@code bytes} (at least {@link LogInput#MAX_LINE}) and {@code lines}. */
  @SuppressWarnings("unchecked")
  SplitInput(LogInput in, int partitions, int bytes, int lines, int maxQueued) {
    this.in = in;
    this.partitions = partitions;
    this.bytes = Math.max(bytes, LogInput.MAX_LINE);
    this.lines = lines;
    this.maxQueued = maxQueued;
    this.queued = new ArrayDeque[partitions];
    for (int p = 0; p < partitions; p++) {
      queued[p] = new ArrayDeque<>();
    }
    this.open = new Chunk[partitions];
    this.closed = new boolean[partitions];
  }

  /** The log as partition {@code p} reads it. */
  Part part(int p) {
    return new Part(p);
  }

  LogInput input() {
    return in;
  }

  /**
   * Partition {@code p}'s next chunk, {@code done} (its last, or null) given back; null at the
   * end. Reads for every partition while none of {@code p}'s is waiting.
   */
  private Chunk take(int p, Chunk done) throws LogInput.InputException {
    synchronized (this) {
      if (done != null) {
        recycle(done);
      }
      while (true) {
        if (failure != null) {
          throw failure;
        }
        Chunk c = queued[p].poll();
        if (c != null) {
          notifyAll(); // a reader may be waiting for room in p's queue
          return c;
        }
        if (eof) {
          return null;
        }
        if (!reading) {
          reading = true;
          break;
        }
        waitHere();
      }
    }
    try {
      readFor(p);
    } catch (LogInput.InputException e) {
      synchronized (this) {
        failure = e;
      }
    } catch (RuntimeException e) {
      synchronized (this) {
        failure = new LogInput.InputException(in.name + ": " + e);
      }
      throw e;
    } finally {
      synchronized (this) {
        reading = false;
        notifyAll();
      }
    }
    return take(p, null);
  }

  /** Reads lines into every partition's chunks until one of {@code p}'s is full, or the end. */
  private void readFor(int p) throws LogInput.InputException {
    while (in.nextLine()) {
      int q = in.partitionOf(partitions);
      if (q < 0) {
        q = 0; // a line that does not parse is reported once, by partition 0
      }
      int s = in.lineStart;
      int e = in.lineEnd;
      Chunk c = open[q];
      if (c == null || !c.fits(e - s)) {
        boolean mine = c != null && q == p;
        if (c != null) {
          enqueue(q, c);
        }
        open[q] = c = fresh();
        c.add(in.buffer(), s, e, in.lines());
        if (mine) {
          return;
        }
        continue;
      }
      c.add(in.buffer(), s, e, in.lines());
    }
    synchronized (this) {
      for (int q = 0; q < partitions; q++) {
        if (open[q] != null) {
          if (closed[q]) {
            recycle(open[q]);
          } else {
            queued[q].add(open[q]);
          }
          open[q] = null;
        }
      }
      eof = true;
      notifyAll();
    }
  }

  /** Queues a full chunk for {@code q}, waiting while q has {@value #QUEUED} waiting already. */
  private synchronized void enqueue(int q, Chunk c) {
    while (queued[q].size() >= maxQueued && !closed[q]) {
      waitHere();
    }
    if (closed[q]) {
      recycle(c);
    } else {
      queued[q].add(c);
      notifyAll();
    }
  }

  private synchronized Chunk fresh() {
    Chunk c = free.poll();
    return c != null ? c : new Chunk(bytes, lines);
  }

  private void recycle(Chunk c) {
    c.count = 0;
    c.used = 0;
    free.add(c);
  }

  /** Partition {@code p} reads no more: its lines are dropped, nobody waits for it. */
  private synchronized void close(int p) {
    closed[p] = true;
    while (!queued[p].isEmpty()) {
      recycle(queued[p].poll());
    }
    notifyAll();
  }

  private void waitHere() {
    try {
      wait();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the log", e);
    }
  }

  /** One partition's lines of the log, in the log's order. */
  final class Part {
    private final int partition;
    private Chunk chunk;
    private int at;

    private Part(int partition) {
      this.partition = partition;
    }

    /**
     * The partition's next line that parses, in {@code r} (valid until the next call); false at
     * the end. Lines that do not parse are counted in {@code problems} and skipped.
     */
    boolean next(LogRecord r, Problems problems) throws LogInput.InputException {
      while (true) {
        Chunk c = chunk;
        if (c != null && at < c.count) {
          int i = at++;
          int s = c.start[i];
          int e = c.end[i];
          r.reset(c.data);
          r.line = c.number[i];
          r.input = in.index;
          // The format is known: the reader detected it before it cut a line.
          if (in.format().parse(c.data, s, e, r)) {
            return true;
          }
          problems.bad(in.name, r.line, r.error, c.data, s, e);
          continue;
        }
        chunk = take(partition, c);
        at = 0;
        if (chunk == null) {
          return false;
        }
      }
    }

    /** Stops reading: called when the partition ends, whether at the log's end or failing. */
    void close() {
      SplitInput.this.close(partition);
    }
  }

  @Override
  public String toString() {
    return in.name + " in " + partitions + " partitions" + Arrays.toString(closed);
  }
}
