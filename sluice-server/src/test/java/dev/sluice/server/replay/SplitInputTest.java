package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log read once for several partitions gives each partition exactly the lines, in order and
 * with their bytes (read into blocks reused only when no chunk points into them), that
 * reading the whole log in each partition and skipping the others' lines gives it (the reference
 * here). Tiny chunks and queues, and one partition with most of the lines, make the threads hand
 * the reading over and wait for room thousands of times.
 */
class SplitInputTest {

  @TempDir
  Path dir;

  private static final int PARTITIONS = 3;
  private static final int LINES = 20_000;

  /** Combined lines, most from a few clients, with unparsable and over-long lines among them. */
  private Path log() throws Exception {
    SplittableRandom random = new SplittableRandom(7);
    StringBuilder sb = new StringBuilder();
    int bad = 0;
    for (int i = 0; i < LINES; i++) {
      if (i % 997 == 5) {
        sb.append("not a log line ").append(i).append('\n');
        bad++;
        continue;
      }
      if (i == 12_345) {
        sb.append("x".repeat(LogInput.MAX_LINE + 10)).append('\n');
        continue;
      }
      int client = random.nextInt(10) < 8 ? random.nextInt(3) : random.nextInt(5000);
      sb.append("10.0.").append(client >> 8).append('.').append(client & 255)
          .append(" - - [01/Jun/2025:12:00:").append(String.format("%02d", i * 60 / LINES))
          .append(" +0000] \"GET /api/items/").append(i).append(" HTTP/1.1\" 200 ")
          .append(random.nextInt(5000)).append(" \"-\" \"agent ").append(i % 7).append("\"\n");
    }
    assertThat(bad).isPositive();
    Path p = dir.resolve("access.log");
    Files.write(p, sb.toString().getBytes(StandardCharsets.US_ASCII));
    return p;
  }

  /** Partition p's lines by the old way: the whole log read, other partitions' lines skipped. */
  private static List<String> reference(Path log, int p, int partitions, Problems problems)
      throws Exception {
    List<String> lines = new ArrayList<>();
    try (LogInput in = LogInput.open(log.toString(), 0, System.in, Formats.of("combined"),
        problems, p, partitions)) {
      LogRecord r = new LogRecord();
      while (in.next(r)) {
        lines.add(seen(r));
      }
    }
    return lines;
  }

  /** A line as a partition got it: its number and its target (which names the line). */
  private static String seen(LogRecord r) {
    return r.line + " " + r.get(Field.TARGET);
  }

  @Test
  @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void everyPartitionGetsItsLines_inOrder_asIfItReadTheWholeLog() throws Exception {
    Path log = log();
    Problems splitProblems = new Problems();
    SplitInput split = new SplitInput(LogInput.open(log.toString(), 0, System.in,
        Formats.of("combined"), splitProblems, 0, 1), PARTITIONS, 0, 7, 2);
    List<List<String>> got = new ArrayList<>();
    Problems[] problems = new Problems[PARTITIONS];
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      List<String> mine = new ArrayList<>();
      got.add(mine);
      Problems pr = problems[p] = new Problems();
      SplitInput.Part part = split.part(p);
      Thread t = new Thread(() -> {
        try {
          LogRecord r = new LogRecord();
          while (part.next(r, pr)) {
            mine.add(seen(r));
            assertThat(r.micros).isPositive();
          }
        } catch (Throwable e) {
          failed.set(e);
        } finally {
          part.close();
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    split.input().close();
    assertThat(failed.get()).isNull();
    int total = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      Problems ref = new Problems();
      assertThat(got.get(p)).as("partition %d", p).isEqualTo(reference(log, p, PARTITIONS, ref));
      total += got.get(p).size();
      assertThat(problems[p].count()).as("unparsable lines, reported by partition 0 only")
          .isEqualTo(p == 0 ? LINES / 997 + 1 : 0);
    }
    assertThat(total).isEqualTo(LINES - (LINES / 997 + 1) - 1);
    assertThat(splitProblems.count()).as("the over-long line, reported once").isEqualTo(1);
    assertThat(split.input().lines()).isEqualTo(LINES);
  }

  /**
   * Lines waiting in a partition's queue keep their bytes while the log is read on into other
   * blocks: one partition read to the end first, in one thread, then the other.
   */
  @Test
  void queuedLines_keepTheirBytes_whileTheLogIsReadOn() throws Exception {
    Path log = log();
    SplitInput split = new SplitInput(LogInput.open(log.toString(), 0, System.in,
        Formats.of("combined"), new Problems(), 0, 1), 2, 0, 7, 1_000_000);
    List<List<String>> got = new ArrayList<>();
    for (int p = 0; p < 2; p++) {
      SplitInput.Part part = split.part(p);
      LogRecord r = new LogRecord();
      List<String> lines = new ArrayList<>();
      while (part.next(r, new Problems())) {
        lines.add(seen(r));
      }
      part.close();
      got.add(lines);
    }
    split.input().close();
    for (int p = 0; p < 2; p++) {
      assertThat(got.get(p)).as("partition %d", p).isEqualTo(reference(log, p, 2, new Problems()));
    }
  }

  /** A partition that stops (its thread failed) holds nobody up: the others read to the end. */
  @Test
  @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void aPartitionThatStops_holdsUpNoOther() throws Exception {
    Path log = log();
    SplitInput split = new SplitInput(LogInput.open(log.toString(), 0, System.in,
        Formats.of("combined"), new Problems(), 0, 1), 2, 0, 5, 1);
    SplitInput.Part quitter = split.part(0);
    AtomicReference<Boolean> first = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        first.set(quitter.next(new LogRecord(), new Problems()));
      } catch (LogInput.InputException e) {
        first.set(false);
      } finally {
        quitter.close();
      }
    });
    t.start();
    SplitInput.Part other = split.part(1);
    LogRecord r = new LogRecord();
    List<String> lines = new ArrayList<>();
    while (other.next(r, new Problems())) {
      lines.add(seen(r));
    }
    t.join();
    split.input().close();
    assertThat(first.get()).isTrue();
    assertThat(lines).isEqualTo(reference(log, 1, 2, new Problems()));
  }
}
