package dev.sluice.bench;

import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import io.github.bucket4j.Bucket;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
 * 1,000,000 distinct IP keys, each call picking one at random (uniformly, with
 * {@link ThreadLocalRandom}, the same for every library), so nearly every call misses the CPU
 * caches. Only keyed limiters take part: Sluice's in-memory store, capped at 2,000,000 keys so it
 * never evicts, and Bucket4j's lock-free buckets held in a {@link ConcurrentHashMap} through
 * {@code computeIfAbsent}, the usual way to key Bucket4j. Both get the same token bucket, the one
 * for many keys of {@link Peers}, which never refuses here and keeps every key tracked. Setup
 * tracks all 1,000,000 keys in both before measuring, so the runs measure lookups of tracked
 * keys, not insertions.
 *
 * <p>{@code sluice} builds the {@link Identity} per call, as an HTTP adapter does, and returns a
 * new {@code Decision}; {@code sluiceInto} writes into a reused {@code MutableDecision};
 * {@code sluiceReusedIdentity} also picks from 1,000,000 prebuilt identities. {@code baselinePickKey}
 * only picks the key, to show how much of each figure is the machine's memory latency.
 *
 * <p>The {@code ...FromRequest} pair formats the picked address into a new string per call, as a
 * server decodes each request's address, and hands both libraries that string: the map then
 * hashes it and compares it with its stored key's characters, where the other methods pass the
 * stored string itself (hash cached, equal by reference) and Sluice reads its cold characters.
 *
 * <p>Run (from the repository root, after
 * {@code mvn -pl sluice-core,sluice-bench -am package -DskipTests}):
 *
 * <pre>
 * java -jar sluice-bench/target/benchmarks.jar DistinctKeysBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -t 1
 * java -jar sluice-bench/target/benchmarks.jar DistinctKeysBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -t 2
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class DistinctKeysBenchmark {

  static final int KEYS = 1_000_000;

  private static final Function<String, Bucket> NEW_BUCKET = ip -> Peers.bucket4jKeyed();

  private String[] ips;
  private Identity[] identities;
  private RateLimiter sluice;
  private Rule rule;
  private ConcurrentHashMap<String, Bucket> bucket4j;

  @Setup(Level.Trial)
  public void setUp() {
    ips = Ips.distinct(KEYS);
    identities = new Identity[KEYS];
    sluice = RateLimiter.of(Store.memory(Ticker.system(), 2_000_000));
    rule = Peers.sluiceKeyedRule();
    bucket4j = new ConcurrentHashMap<>();
    for (int i = 0; i < KEYS; i++) {
      identities[i] = Identity.ip(ips[i]);
      sluice.check(rule, identities[i]);
      bucket4j.computeIfAbsent(ips[i], NEW_BUCKET).tryConsume(1);
    }
  }

  /** Fails the run if a key was evicted or refused: the numbers would measure another path. */
  @TearDown(Level.Trial)
  public void verify() {
    long size = sluice.store().size();
    if (size != KEYS || bucket4j.size() != KEYS) {
      throw new IllegalStateException("tracked keys: sluice " + size + ", bucket4j "
          + bucket4j.size() + " (expected: " + KEYS + ")");
    }
    for (int i = 0; i < KEYS; i += 1000) {
      if (!sluice.check(rule, identities[i]).allowed() || !bucket4j.get(ips[i]).tryConsume(1)) {
        throw new IllegalStateException("key " + ips[i] + " was refused");
      }
    }
  }

  /**
   * The floor every keyed limiter pays here: pick a random key and read its string (two likely
   * cache misses), with no limiting at all.
   */
  @Benchmark
  public int baselinePickKey() {
    return ips[ThreadLocalRandom.current().nextInt(KEYS)].length();
  }

  @Benchmark
  public boolean sluice() {
    return sluice.check(rule, Identity.ip(ips[ThreadLocalRandom.current().nextInt(KEYS)]))
        .allowed();
  }

  @Benchmark
  public boolean sluiceInto(HotKeyBenchmark.Into into) {
    return sluice.check(rule, Identity.ip(ips[ThreadLocalRandom.current().nextInt(KEYS)]), 1,
        into.decision);
  }

  @Benchmark
  public boolean sluiceReusedIdentity(HotKeyBenchmark.Into into) {
    return sluice.check(rule, identities[ThreadLocalRandom.current().nextInt(KEYS)], 1,
        into.decision);
  }

  @Benchmark
  public boolean sluiceFromRequest(HotKeyBenchmark.Into into) {
    return sluice.check(rule, Identity.ip(Ips.ip(ThreadLocalRandom.current().nextInt(KEYS))), 1,
        into.decision);
  }

  @Benchmark
  public boolean bucket4jInMapFromRequest() {
    return bucket4j.computeIfAbsent(Ips.ip(ThreadLocalRandom.current().nextInt(KEYS)), NEW_BUCKET)
        .tryConsume(1);
  }

  @Benchmark
  public boolean bucket4jInMap() {
    return bucket4j.computeIfAbsent(ips[ThreadLocalRandom.current().nextInt(KEYS)], NEW_BUCKET)
        .tryConsume(1);
  }
}
