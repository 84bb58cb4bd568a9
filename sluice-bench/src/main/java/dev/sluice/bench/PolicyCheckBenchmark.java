package dev.sluice.bench;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import java.time.Duration;
import java.util.List;
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
 * The check the default policy (seed 000) makes per request: the route's rule (a token bucket)
 * and the global per-address backstop (a fixed window), atomically, on one hot key. The limits
 * keep seed 000's algorithms and shapes with capacities large enough that the run stays on the
 * allowed path (the seed's own 120 burst would refuse after a microsecond). Sluice only: this is
 * a report of what a policy check costs, with its allocation ({@code -prof gc}).
 *
 * <p>Run: {@code java -jar sluice-bench/target/benchmarks.jar PolicyCheckBenchmark -f 1 -wi 3
 * -w 2s -i 5 -r 2s -t 1 -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class PolicyCheckBenchmark {

  private static final String IP = "203.0.113.7";

  private RateLimiter sluice;
  private List<Rule> rules;
  private Identity identity;

  @Setup(Level.Trial)
  public void setUp() {
    sluice = RateLimiter.of(Store.memory(Ticker.system(), 100_000));
    Rule read = Rule.builder("read")
        .limit(Limit.tokenBucket("read", Peers.RATE, Peers.RATE, Duration.ofSeconds(1))).build();
    Rule backstop = Rule.builder("backstop")
        .limit(Limit.fixedWindow("backstop", Integer.MAX_VALUE, Duration.ofSeconds(60))).build();
    rules = List.of(read, backstop);
    identity = Identity.ip(IP);
  }

  @TearDown(Level.Trial)
  public void verifyAllowed() {
    if (!sluice.check(rules, identity, 1).allowed()) {
      throw new IllegalStateException("refused: the limits are too small for this rate");
    }
  }

  @Benchmark
  public boolean sluice() {
    return sluice.check(rules, Identity.ip(IP), 1).allowed();
  }

  @Benchmark
  public boolean sluiceInto(HotKeyBenchmark.Into into) {
    return sluice.check(rules, Identity.ip(IP), 1, into.decision);
  }
}
