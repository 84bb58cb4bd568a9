package dev.sluice.server.replay;

import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.Policy;
import dev.sluice.policy.PolicyLoader;
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The replay's matching of a parsed line, alone (issue 23): what {@code Engine} does for a line
 * before its decision (the logged target read, {@code Policy.select} with seed 000's default
 * policy, the client's address and table key), without the store and the client table, whose
 * cache misses dominate a whole replay and swing with the machine. The lines are the first
 * {@code lines} of a {@link ReplayLoad} log, held one after another as the reader holds them,
 * each parsed and then matched in turn; {@code parse} is the parse alone, to subtract. With its
 * allocation ({@code -prof gc}).
 *
 * <pre>
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.server.replay.ReplayLoad generate \
 *     /tmp/replay-2m.log 2000000 1000000
 * java -jar sluice-bench/target/benchmarks.jar ReplayMatchBenchmark -p log=/tmp/replay-2m.log \
 *     -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ReplayMatchBenchmark {

  @Param("/tmp/replay-2m.log")
  public String log;

  /** Lines taken in turn (a power of two): distinct clients, the log's mix of targets. */
  @Param("65536")
  public int lines;

  private Policy policy;
  private LineFormat combined;
  /** The lines one after another, as the replay's reader holds a chunk of them. */
  private byte[] text;
  private int[] starts;
  private final LogRecord record = new LogRecord();
  private ReplayView view;
  private int next;

  @Setup
  public void setup() throws Exception {
    policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    combined = Formats.of("combined");
    java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
    starts = new int[lines + 1];
    try (BufferedReader in = Files.newBufferedReader(Path.of(log), StandardCharsets.US_ASCII)) {
      for (int i = 0; i < lines; i++) {
        starts[i] = all.size();
        all.write(in.readLine().getBytes(StandardCharsets.US_ASCII));
      }
      starts[lines] = all.size();
    }
    text = all.toByteArray();
    view = new ReplayView(policy.paths());
  }

  private LogRecord parse(int i) {
    LogRecord r = record;
    r.reset(text);
    if (!combined.parse(text, starts[i], starts[i + 1], r)) {
      throw new IllegalStateException(log + ":" + (i + 1) + ": not combined: " + r.error);
    }
    return r;
  }

  /** The floor: one line parsed into the record, as the replay's reader does. */
  @Benchmark
  public int parse() {
    int i = next++ & (lines - 1);
    return parse(i).status;
  }

  /** One line parsed, then matched as {@code Engine.prepare} matches it; its key returned. */
  @Benchmark
  public long match() {
    LogRecord r = parse(next++ & (lines - 1));
    view.reset(r);
    if (!view.target().ok()) {
      return 0;
    }
    Check check = policy.select(view);
    if (check.exempt() || check.rules().isEmpty()) {
      return 1;
    }
    return Engine.key(view.clientAddress(policy.clientAddress())) ^ check.cost();
  }
}
