package dev.sluice.bench;

import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
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
 * One hot key: every thread checks the same limiter, so with two threads they contend on one
 * bucket. Every library gets the never-refusing token bucket of {@link Peers}, so this measures the
 * allowed path.
 *
 * <p>Sluice does more per call than its peers by design: it builds the store key from the rule and
 * the identity and looks it up in its map, where Bucket4j, Resilience4j and Guava hold a single
 * limiter object. {@code sluice} builds the {@link Identity} per call, as an HTTP adapter does;
 * {@code sluiceReusedIdentity} reuses one, to show what the identity itself costs.
 *
 * <p>Run (from the repository root, after
 * {@code mvn -pl sluice-core,sluice-bench -am package -DskipTests}):
 *
 * <pre>
 * java -jar sluice-bench/target/benchmarks.jar HotKeyBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -t 1
 * java -jar sluice-bench/target/benchmarks.jar HotKeyBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -t 2
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class HotKeyBenchmark {

  private static final String IP = "203.0.113.7";

  private RateLimiter sluice;
  private Rule rule;
  private Identity identity;
  private Bucket bucket4j;
  private AtomicRateLimiter resilience4j;
  private com.google.common.util.concurrent.RateLimiter guava;

  @Setup(Level.Trial)
  public void setUp() {
    sluice = RateLimiter.of(Store.memory(Ticker.system(), 2_000_000));
    rule = Peers.sluiceRule();
    identity = Identity.ip(IP);
    bucket4j = Peers.bucket4j();
    resilience4j = Peers.resilience4j();
    guava = Peers.guava();
  }

  /** Fails the run if any library refused: the numbers would then measure a different path. */
  @TearDown(Level.Trial)
  public void verifyNeverRefused() {
    if (!sluice.check(rule, identity).allowed() || !bucket4j.tryConsume(1)
        || !resilience4j.acquirePermission() || !guava.tryAcquire()) {
      throw new IllegalStateException("a limiter refused: the bucket is too small for this rate");
    }
  }

  @Benchmark
  public boolean sluice() {
    return sluice.check(rule, Identity.ip(IP)).allowed();
  }

  @Benchmark
  public boolean sluiceReusedIdentity() {
    return sluice.check(rule, identity).allowed();
  }

  @Benchmark
  public boolean bucket4j() {
    return bucket4j.tryConsume(1);
  }

  @Benchmark
  public boolean resilience4j() {
    return resilience4j.acquirePermission();
  }

  @Benchmark
  public boolean guava() {
    return guava.tryAcquire();
  }
}
