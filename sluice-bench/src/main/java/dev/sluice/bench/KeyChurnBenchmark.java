package dev.sluice.bench;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.MutableDecision;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The in-memory store's new-key path: seed 000's check (the read route's token bucket, 120 burst
 * refilling 240 a minute, and the backstop's fixed window of 600 a minute, atomically) on
 * 1,000,000 clients picked at random, on a clock that moves 360 us per call (10,000,000 calls an
 * hour, the replay benchmark's log). A client comes back about every six minutes, by when both
 * its states are fresh and a sweep has dropped them, so nearly every call inserts two keys and
 * the sweeps drop as many: the path of a gateway meeting new clients and of {@code sluice
 * replay}, which {@code DistinctKeysBenchmark} (keys tracked before measuring) does not take.
 * Each thread has its own store and clock, as each replay partition does.
 *
 * <p>Run: {@code java -jar sluice-bench/target/benchmarks.jar KeyChurnBenchmark -f 1 -wi 3
 * -w 2s -i 5 -r 2s -t 1 -prof gc}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class KeyChurnBenchmark {

  static final int CLIENTS = 1_000_000;
  static final long STEP_NANOS = 360_000;

  private long now;
  private RateLimiter limiter;
  private List<Rule> rules;
  private Identity[] identities;
  private final SplittableRandom random = new SplittableRandom(23);
  private final MutableDecision decision = new MutableDecision();
  private long calls;
  private long allowed;

  @Setup(Level.Trial)
  public void setUp() {
    limiter = RateLimiter.of(Store.memory(() -> now, CLIENTS));
    Rule read = Rule.builder("read")
        .limit(Limit.tokenBucket("read", 120, 240, Duration.ofMinutes(1))).build();
    Rule backstop = Rule.builder("backstop")
        .limit(Limit.fixedWindow("backstop", 600, Duration.ofMinutes(1))).build();
    rules = List.of(read, backstop);
    identities = new Identity[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
      identities[i] = Identity.ip((10 + (i >>> 24 & 0x7f)) + "." + (i >>> 16 & 0xff) + "."
          + (i >>> 8 & 0xff) + "." + (i & 0xff));
    }
  }

  /** Fails the run if a call was refused: these clients are polite, a refusal is another path. */
  @TearDown(Level.Trial)
  public void verify() {
    if (allowed != calls) {
      throw new IllegalStateException((calls - allowed) + " of " + calls + " calls refused");
    }
    long size = limiter.store().size();
    if (size > CLIENTS) {
      throw new IllegalStateException("store size " + size + " over its cap");
    }
  }

  @Benchmark
  public boolean newClients() {
    now += STEP_NANOS;
    calls++;
    boolean ok = limiter.check(rules, identities[random.nextInt(CLIENTS)], 1, decision);
    if (ok) {
      allowed++;
    }
    return ok;
  }
}
