package dev.sluice.server.replay;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A progress line on standard error while a replay runs: lines, lines per second and, when the
 * inputs' size is known, the share read and the time left. Redrawn in place twice a second;
 * only shown on a terminal.
 */
final class Progress implements AutoCloseable {

  private final PrintStream err;
  private final Replay replay;
  private final long total;
  private final long start = System.nanoTime();
  private final Thread thread;
  private volatile boolean done;

  Progress(PrintStream err, Replay replay) {
    this.err = err;
    this.replay = replay;
    this.total = replay.totalBytes();
    this.thread = new Thread(this::loop, "sluice-replay-progress");
    thread.setDaemon(true);
    thread.start();
  }

  private void loop() {
    while (!done) {
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        return;
      }
      if (!done) {
        err.print('\r' + line(replay.linesRead(), replay.bytesRead(), total,
            System.nanoTime() - start) + "\u001b[K");
        err.flush();
      }
    }
  }

  /** {@code 1,234,567 lines  812,000 lines/s  [=====>    ] 52%  ETA 4s}. */
  static String line(long lines, long bytes, long total, long nanos) {
    double secs = Math.max(1e-9, nanos / 1e9);
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%,d lines  %,d lines/s",
        lines, Math.round(lines / secs)));
    if (total > 0) {
      double share = Math.min(1, (double) bytes / total);
      int width = 24;
      int filled = (int) Math.round(share * width);
      sb.append("  [").append("=".repeat(Math.max(0, filled - 1))).append(filled > 0 ? ">" : "")
          .append(" ".repeat(width - filled)).append(String.format(Locale.ROOT, "] %3d%%",
              Math.round(share * 100)));
      if (share > 0.01) {
        long left = Math.round(secs / share - secs);
        sb.append(String.format(Locale.ROOT, "  ETA %dm%02ds", left / 60, left % 60));
      }
    }
    return sb.toString();
  }

  @Override
  public void close() {
    done = true;
    thread.interrupt();
    err.print("\r\u001b[K");
    err.flush();
  }
}
