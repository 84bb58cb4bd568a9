package dev.sluice.bench;

import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import io.github.bucket4j.Bucket;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * Retained heap per tracked key at 1,000,000 IP keys: Sluice's in-memory store against Bucket4j
 * buckets in a {@link ConcurrentHashMap}, each key checked once with the limit for many keys of
 * {@link Peers} (so each key holds state that is not fresh, and Sluice's store keeps it).
 *
 * <p>Retained heap is the used heap after full collections with the structure alive, minus the
 * same before it was built. Every key string is made fresh for its insertion and referenced by
 * nothing but the structure under test, so each side pays for the keys it keeps: Bucket4j's map
 * keeps the IP string itself, Sluice keeps its own store key ({@code "api:" + ip}) and drops the
 * {@link Identity}. A third line, the IP strings alone in an array, shows how much of either
 * figure is the key string.
 *
 * <p>Run (from the repository root, after
 * {@code mvn -pl sluice-core,sluice-bench -am package -DskipTests}):
 *
 * <pre>
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.HeapPerKey
 * </pre>
 */
public final class HeapPerKey {

  static final int KEYS = 1_000_000;

  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
  private static final Function<String, Bucket> NEW_BUCKET = ip -> Peers.bucket4jKeyed();

  private HeapPerKey() {}

  public static void main(String[] args) {
    System.out.printf(Locale.ROOT, "%s %s, max heap %d MiB, %,d keys%n",
        System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
        Runtime.getRuntime().maxMemory() >> 20, KEYS);
    Rule rule = Peers.sluiceKeyedRule();
    // One warm-up round so class loading and JIT metadata are not charged to the first line.
    measure("warm-up", n -> fillSluice(rule, 10_000), 10_000);
    measure("warm-up", n -> fillBucket4j(10_000), 10_000);

    measure("sluice memory store", n -> fillSluice(rule, n), KEYS);
    measure("bucket4j in a ConcurrentHashMap", n -> fillBucket4j(n), KEYS);
    measure("(IP strings alone, in an array)", n -> Ips.distinct(n), KEYS);
  }

  private static Object fillSluice(Rule rule, int n) {
    Store store = Store.memory(Ticker.system(), 2 * KEYS);
    RateLimiter limiter = RateLimiter.of(store);
    for (int i = 0; i < n; i++) {
      if (!limiter.check(rule, Identity.ip(Ips.ip(i))).allowed()) {
        throw new IllegalStateException("refused " + Ips.ip(i));
      }
    }
    if (store.size() != n) {
      throw new IllegalStateException("store holds " + store.size() + " keys (expected " + n + ")");
    }
    return limiter;
  }

  private static Object fillBucket4j(int n) {
    ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
    for (int i = 0; i < n; i++) {
      if (!buckets.computeIfAbsent(Ips.ip(i), NEW_BUCKET).tryConsume(1)) {
        throw new IllegalStateException("refused " + Ips.ip(i));
      }
    }
    return buckets;
  }

  private static void measure(String what, IntFunction<Object> build, int n) {
    long before = usedAfterGc();
    Object structure = build.apply(n);
    long after = usedAfterGc();
    Reference.reachabilityFence(structure);
    if (!what.equals("warm-up")) {
      System.out.printf(Locale.ROOT, "%-34s %,14d bytes  %7.1f bytes/key%n", what,
          after - before, (after - before) / (double) n);
    }
  }

  /** Used heap once repeated full collections stop freeing anything. */
  private static long usedAfterGc() {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      System.gc();
      long now = MEMORY.getHeapMemoryUsage().getUsed();
      if (i >= 3 && now >= used) {
        return Math.min(used, now);
      }
      used = Math.min(used, now);
    }
    return used;
  }
}
