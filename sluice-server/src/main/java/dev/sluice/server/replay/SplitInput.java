package dev.sluice.server.replay;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * One log read once for several partitions: each line is cut and its client's partition found
 * once, and its place noted in that partition's chunk of lines, which its thread parses and
 * decides where the line was read. (Reading the log in every partition's thread cost each thread
 * a line cut and a partition hash for every other partition's line: with two threads, as much
 * work skipping as parsing. Copying each line into its partition's chunk cost the reader the
 * copy and moved every line between the cores twice.)
 *
 * <p>There is no reader thread: a partition whose chunks ran out reads for all, until a chunk of
 * its own is ready, while the others go on with theirs. The log is read into blocks that stay
 * put while a chunk points into them and are then read into again. A partition holds at most
 * {@value #QUEUED} full chunks waiting; a reader that would pass that waits for the partition to
 * take one, which it can (it has chunks, so it does not wait to read), so memory stays bounded
 * (a block for every chunk waiting, open or being decided: about {@value #QUEUED} + 3 blocks of
 * {@link LogInput#BUFFER} bytes a partition) and no two threads wait on each other. A partition
 * that stops early (it failed) is closed: its lines are dropped.
 */
final class SplitInput {

  static final int LINES = 2048;
  static final int QUEUED = 4;

  /** A buffer the log was read into, and how many chunks point into it (guarded by the split). */
  private static final class Block {
    final byte[] data;
    int chunks;

    Block(byte[] data) {
      this.data = data;
    }
  }

  /** Where one partition's lines are in one block. */
  static final class Chunk {
    Block block;
    final int[] start;
    final int[] end;
    final long[] number;
    int count;

    Chunk(int lines) {
      start = new int[lines];
      end = new int[lines];
      number = new long[lines];
    }

    boolean full() {
      return count == start.length;
    }

    void add(int s, int e, long line) {
      start[count] = s;
      end[count] = e;
      number[count] = line;
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
  private final ArrayDeque<Block> freeBlocks = new ArrayDeque<>();
  /** The block the log is being read into. */
  private Block current;
  private boolean reading;
  private boolean eof;
  private LogInput.InputException failure;

  SplitInput(LogInput in, int partitions) {
    this(in, partitions, LogInput.BUFFER, LINES, QUEUED);
  }

  /**
   * With blocks of {@code bytes} after the input's first (at least twice {@link LogInput#MAX_LINE}),
   * chunks of {@code lines}, and at most {@code maxQueued} waiting per partition.
   */
  @SuppressWarnings("unchecked")
  SplitInput(LogInput in, int partitions, int bytes, int lines, int maxQueued) {
    this.in = in;
    this.partitions = partitions;
    this.bytes = Math.max(bytes, 2 * LogInput.MAX_LINE);
    this.lines = lines;
    this.maxQueued = maxQueued;
    this.queued = new ArrayDeque[partitions];
    for (int p = 0; p < partitions; p++) {
      queued[p] = new ArrayDeque<>();
    }
    this.open = new Chunk[partitions];
    this.closed = new boolean[partitions];
    this.current = new Block(in.buffer());
    in.readInto(this::next);
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
      Chunk c = open[q];
      if (c == null || c.full() || c.block != current) {
        boolean mine = c != null && q == p;
        if (c != null) {
          enqueue(q, c);
        }
        open[q] = c = fresh(current);
        c.add(in.lineStart, in.lineEnd, in.lines());
        if (mine) {
          return;
        }
        continue;
      }
      c.add(in.lineStart, in.lineEnd, in.lines());
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

  /**
   * The input's next buffer, the current block's being full: a block no chunk points into, or a
   * new one. The reader calls it, from inside {@link LogInput#nextLine}.
   */
  private synchronized byte[] next() {
    Block old = current;
    Block b = freeBlocks.poll();
    current = b != null ? b : new Block(new byte[bytes]);
    if (old.chunks == 0) {
      freeBlocks.add(old);
    }
    return current.data;
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

  private synchronized Chunk fresh(Block block) {
    Chunk c = free.poll();
    if (c == null) {
      c = new Chunk(lines);
    }
    c.block = block;
    block.chunks++;
    return c;
  }

  private void recycle(Chunk c) {
    Block b = c.block;
    if (--b.chunks == 0 && b != current) {
      freeBlocks.add(b);
    }
    c.block = null;
    c.count = 0;
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
          byte[] data = c.block.data;
          r.reset(data);
          r.line = c.number[i];
          r.input = in.index;
          // The format is known: the reader detected it before it cut a line.
          if (in.format().parse(data, s, e, r)) {
            return true;
          }
          problems.bad(in.name, r.line, r.error, data, s, e);
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
