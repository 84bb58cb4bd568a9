package dev.sluice.server.replay;

import dev.sluice.core.policy.Policy;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs logs through one policy (and a second to compare): each input read and parsed, inputs
 * merged by time, each line decided by an {@link Engine}. With {@code threads > 1} the clients
 * are split into that many partitions by a hash of the logged address, each replayed by its own
 * thread with its own engine and store, which is exact while every rule is keyed by the client
 * address (the partitions then share no key). One log is read once for all partitions
 * ({@link SplitInput}: each line cut and its partition found once); with several logs, merged by
 * time, each thread reads every log and skips other partitions' lines after reading only their
 * address.
 */
final class Replay {

  /**
   * What to replay.
   *
   * @param policy the policy to try
   * @param compare a second policy decided on the same lines, or null
   * @param logs files, {@code -} for standard input
   * @param format the format, or null to detect each input's from its first line
   * @param threads partitions by client, each on its own thread
   * @param maxKeys the store's key cap (the policy's {@code store.maxKeys})
   * @param clientCap the most clients whose counts are kept at once
   * @param parseOnly read and parse, decide nothing (the benchmark's floor)
   */
  record Options(Policy policy, Policy compare, List<String> logs, LineFormat format,
      int threads, int maxKeys, int clientCap, boolean parseOnly) {}

  /** What a replay saw. */
  record Result(Tally a, Tally b, Problems problems, List<InputInfo> inputs, long lines,
      long parsed, long backwards, long maxBehindMicros, long elapsedNanos) {}

  /** One input: its name, the format it was read as, its lines and size. */
  record InputInfo(String name, String format, long lines, long bytes, boolean gzip) {}

  private final Options options;
  private final InputStream stdin;
  private final Engine.Listener listener;
  private final List<Worker> workers = new ArrayList<>();
  /** With several partitions and one log: the log, read once for all; else null. */
  private SplitInput split;
  /** Lines the split log's reader found bad before any partition saw them (too long). */
  private final Problems splitProblems = new Problems();

  Replay(Options options, InputStream stdin, Engine.Listener listener) {
    this.options = options;
    this.stdin = stdin;
    this.listener = listener;
    for (int p = 0; p < options.threads(); p++) {
      workers.add(new Worker(p));
    }
  }

  /** Lines read so far (by the first partition, which reads them all). */
  long linesRead() {
    return workers.get(0).lines;
  }

  /** Input bytes read so far, of {@link #totalBytes()} (compressed bytes for gzip). */
  long bytesRead() {
    return workers.get(0).bytes;
  }

  /** The inputs' size, or -1 when one is standard input. */
  long totalBytes() {
    long total = 0;
    for (String name : options.logs()) {
      if (name.equals("-")) {
        return -1;
      }
      try {
        total += java.nio.file.Files.size(java.nio.file.Path.of(name));
      } catch (java.io.IOException e) {
        return -1;
      }
    }
    return total;
  }

  Result run() throws LogInput.InputException {
    long start = System.nanoTime();
    if (workers.size() > 1 && options.logs().size() == 1) {
      split = new SplitInput(LogInput.open(options.logs().get(0), 0, stdin, options.format(),
          splitProblems, 0, 1), workers.size());
    }
    try {
      runWorkers();
    } finally {
      if (split != null) {
        split.input().close();
      }
    }
    return result(start);
  }

  private void runWorkers() throws LogInput.InputException {
    if (workers.size() == 1) {
      workers.get(0).run();
    } else {
      List<Thread> threads = new ArrayList<>();
      for (Worker w : workers) {
        Thread t = new Thread(w, "sluice-replay-" + w.partition);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        try {
          t.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new LogInput.InputException("interrupted");
        }
      }
    }
    for (Worker w : workers) {
      if (w.failure.get() != null) {
        throw w.failure.get();
      }
      if (w.crash.get() != null) {
        throw w.crash.get();
      }
    }
  }

  private Result result(long start) {
    long elapsed = System.nanoTime() - start;
    Worker first = workers.get(0);
    Tally a = first.a == null ? null : first.a.tally;
    Tally b = first.b == null ? null : first.b.tally;
    Problems problems = first.problems;
    long parsed = 0;
    long backwards = 0;
    long behind = 0;
    for (Worker w : workers) {
      parsed += w.parsed;
      if (w.a != null) {
        backwards += w.a.clock.backwards;
        behind = Math.max(behind, w.a.clock.maxBehindMicros);
      }
      if (w != first) {
        if (a != null) {
          a.addAll(w.a.tally);
        }
        if (b != null) {
          b.addAll(w.b.tally);
        }
        problems.addAll(w.problems);
      }
    }
    problems.addAll(splitProblems);
    return new Result(a, b, problems, first.infos, first.lines, parsed, backwards, behind,
        elapsed);
  }

  /** One partition's replay. */
  private final class Worker implements Runnable {
    final int partition;
    final Problems problems = new Problems();
    final AtomicReference<LogInput.InputException> failure = new AtomicReference<>();
    final AtomicReference<RuntimeException> crash = new AtomicReference<>();
    final List<InputInfo> infos = new ArrayList<>();
    Engine a;
    Engine b;
    volatile long lines;
    volatile long bytes;
    long parsed;

    Worker(int partition) {
      this.partition = partition;
      if (!options.parseOnly()) {
        // A listener hears one partition's decisions only when there is one partition.
        a = new Engine(options.policy(), options.maxKeys(), options.clientCap(),
            options.threads() == 1 ? listener : null);
        if (options.compare() != null) {
          b = new Engine(options.compare(), options.maxKeys(), options.clientCap(), null);
        }
      }
    }

    @Override
    public void run() {
      SplitInput.Part part = split == null ? null : split.part(partition);
      try {
        replay(part);
      } catch (LogInput.InputException e) {
        failure.set(e);
      } catch (RuntimeException e) {
        crash.set(e);
      } finally {
        if (part != null) {
          part.close();
        }
      }
    }

    /** Replays the partition: its lines of the one split log ({@code part}), or of every log. */
    private void replay(SplitInput.Part part) throws LogInput.InputException {
      List<String> logs = options.logs();
      int n = logs.size();
      LogInput[] in = new LogInput[n];
      LogRecord[] rec = new LogRecord[n];
      boolean[] live = new boolean[n];
      try {
        for (int i = 0; i < n; i++) {
          in[i] = part != null ? split.input() : LogInput.open(logs.get(i), i, stdin,
              options.format(), problems, partition, options.threads());
          rec[i] = new LogRecord();
          live[i] = part != null ? part.next(rec[i], problems) : in[i].next(rec[i]);
        }
        long beat = 0;
        while (true) {
          int next = -1;
          for (int i = 0; i < n; i++) {
            if (live[i] && (next < 0 || rec[i].micros < rec[next].micros)) {
              next = i;
            }
          }
          if (next < 0) {
            break;
          }
          LogRecord r = rec[next];
          parsed++;
          if (a != null) {
            a.offer(r);
            if (b != null) {
              b.offer(r);
            }
          }
          live[next] = part != null ? part.next(r, problems) : in[next].next(r);
          if ((++beat & 0x3fff) == 0) {
            publish(in);
          }
        }
        publish(in);
        for (LogInput i : in) {
          infos.add(new InputInfo(i.name, i.format() == null ? "-" : i.format().name(),
              i.lines(), i.position(), i.gzip));
        }
        if (a != null) {
          a.finish();
        }
        if (b != null) {
          b.finish();
        }
      } finally {
        // The split log is closed once, by run().
        for (LogInput i : in) {
          if (i != null && part == null) {
            i.close();
          }
        }
      }
    }

    private void publish(LogInput[] in) {
      long l = 0;
      long by = 0;
      for (LogInput i : in) {
        if (i != null) {
          l += i.lines();
          by += i.position();
        }
      }
      lines = l;
      bytes = by;
    }
  }
}
