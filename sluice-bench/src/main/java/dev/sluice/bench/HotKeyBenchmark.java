package dev.sluice.bench;

import dev.sluice.core.Identity;
import dev.sluice.core.MutableDecision;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * One hot key: every thread checks the same key, so with two threads they contend on one bucket.
 * {@code path = allowed}: every library gets the never-refusing token bucket of {@link Peers}.
 * {@code path = refused}: the bucket of a flood, 10 burst refilled at 1 per second, drained in
 * setup, so every call is refused (Sluice and Bucket4j only; the single-limiter peers would need
 * a different limit). {@code clock = coarse} gives Sluice and both Bucket4j peers one
 * {@link CoarseClock} instead of {@code System.nanoTime()}, to measure the limiters without the
 * OS clock, which costs about as much as their own work here (Resilience4j and Guava read their
 * own clocks and stay on the system one).
 *
 * <p>The keyed peer is Bucket4j as most servers key it: buckets in a {@link ConcurrentHashMap},
 * {@code computeIfAbsent(ip, ...).tryConsume(1)} per call. Sluice gets the same input, the
 * client address as text: {@code sluice} builds {@code Identity.ip(ip)} per call and returns a new
 * {@code Decision}; {@code sluiceInto} builds the identity per call and writes into a reused
 * {@link MutableDecision}; {@code sluiceReusedIdentity} reuses both (0 bytes per call). The bare
 * Bucket4j bucket, Resilience4j and Guava hold one limiter and look nothing up.
 *
 * <p>The {@code ...FromRequest} pair decodes the address from bytes into a new string per call,
 * as a server does with each request's header or peer address, and hands both libraries that
 * string: the map then hashes it and compares it with its stored key, where the other methods
 * pass one constant string whose hash is cached and which equals the stored key by reference.
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
  /** The address as a request carries it: bytes a server decodes into a new string per call. */
  private static final byte[] IP_BYTES = IP.getBytes(StandardCharsets.US_ASCII);

  @Param({"allowed", "refused"})
  public String path;

  /** {@code system}: System.nanoTime() per call; {@code coarse}: one {@link CoarseClock} for both. */
  @Param({"system", "coarse"})
  public String clock;

  private CoarseClock coarse;

  private RateLimiter sluice;
  private Rule rule;
  private Identity identity;
  private ConcurrentHashMap<String, Bucket> bucket4jMap;
  private Function<String, Bucket> newBucket;
  private Bucket bucket4j;
  private AtomicRateLimiter resilience4j;
  private com.google.common.util.concurrent.RateLimiter guava;

  /** The caller-owned decision of one benchmark thread. */
  @State(Scope.Thread)
  public static class Into {
    final MutableDecision decision = new MutableDecision();
  }

  @Setup(Level.Trial)
  public void setUp() {
    boolean allowed = path.equals("allowed");
    coarse = clock.equals("coarse") ? new CoarseClock() : null;
    sluice = RateLimiter.of(Store.memory(coarse != null ? coarse : Ticker.system(), 2_000_000));
    rule = allowed ? Peers.sluiceRule() : Peers.sluiceFloodRule();
    identity = Identity.ip(IP);
    newBucket = ip -> Peers.bucket4j(allowed ? Peers.hotKeyLimit() : Peers.floodLimit(), coarse);
    bucket4jMap = new ConcurrentHashMap<>();
    bucket4j = newBucket.apply(IP);
    resilience4j = Peers.resilience4j();
    guava = Peers.guava();
    if (!allowed) {
      for (int i = 0; i < Peers.FLOOD_BURST; i++) {
        sluice.check(rule, identity);
        bucket4jMap.computeIfAbsent(IP, newBucket).tryConsume(1);
        bucket4j.tryConsume(1);
      }
    }
  }

  /**
   * Fails the run if the measured library took the other path: the numbers would measure
   * something else. Only the limiter this benchmark method called is checked: on the refused
   * path an idle one refills its flood bucket (1 a second) during the trial and rightly allows.
   */
  @TearDown(Level.Trial)
  public void verifyPath(BenchmarkParams params) {
    boolean expected = path.equals("allowed");
    String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
    boolean took;
    if (method.startsWith("sluice")) {
      took = sluice.check(rule, identity).allowed();
    } else if (method.startsWith("bucket4jInMap")) {
      took = bucket4jMap.computeIfAbsent(IP, newBucket).tryConsume(1);
    } else if (method.equals("bucket4j")) {
      took = bucket4j.tryConsume(1);
    } else if (method.equals("resilience4j") && expected) {
      took = resilience4j.acquirePermission();
    } else if (method.equals("guava") && expected) {
      took = guava.tryAcquire();
    } else {
      took = expected;
    }
    if (took != expected) {
      throw new IllegalStateException(method + " took the other path than " + path);
    }
    if (coarse != null) {
      coarse.stop();
    }
  }

  /**
   * The clock every limiter here reads once per call ({@code System.nanoTime()}): a floor no
   * check can go below.
   */
  @Benchmark
  public long baselineClock() {
    return System.nanoTime();
  }

  @Benchmark
  public boolean sluice() {
    return sluice.check(rule, Identity.ip(IP)).allowed();
  }

  @Benchmark
  public boolean sluiceInto(Into into) {
    return sluice.check(rule, Identity.ip(IP), 1, into.decision);
  }

  @Benchmark
  public boolean sluiceReusedIdentity(Into into) {
    return sluice.check(rule, identity, 1, into.decision);
  }

  @Benchmark
  public boolean bucket4jInMap() {
    return bucket4jMap.computeIfAbsent(IP, newBucket).tryConsume(1);
  }

  @Benchmark
  public boolean sluiceFromRequest(Into into) {
    return sluice.check(rule, Identity.ip(fromRequest()), 1, into.decision);
  }

  @Benchmark
  public boolean bucket4jInMapFromRequest() {
    return bucket4jMap.computeIfAbsent(fromRequest(), newBucket).tryConsume(1);
  }

  private static String fromRequest() {
    return new String(IP_BYTES, StandardCharsets.US_ASCII);
  }

  @Benchmark
  public boolean bucket4j() {
    return bucket4j.tryConsume(1);
  }

  @Benchmark
  public boolean resilience4j() {
    return path.equals("allowed") && resilience4j.acquirePermission();
  }

  @Benchmark
  public boolean guava() {
    return path.equals("allowed") && guava.tryAcquire();
  }
}
