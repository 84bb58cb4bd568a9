package dev.sluice.bench.redis;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.redis.RedisStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.io.File;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Sluice's Redis store against Bucket4j's Lettuce proxy manager, on the same local redis-server
 * with the same client concurrency (issue 4's benchmark): a token bucket on many keys, then a
 * flood from one refused key.
 *
 * <pre>
 * cd /work/main   # the repository root; needs redis-server on the PATH (Debian: redis-server)
 * mvn -q -o -pl sluice-core,sluice-redis,sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.redis.RedisStoreLoad \
 *     --threads 16 --seconds 10 --keys 100000 --rounds 3
 * </pre>
 *
 * <p>Options: {@code --port N} targets a redis-server already listening on 127.0.0.1:N instead
 * of starting a private one (its statistics are reset with {@code CONFIG RESETSTAT}; its data is
 * left alone: every key is under a fresh prefix); {@code --redis-server PATH} picks the binary.
 *
 * <p>The limit, in both libraries: a token bucket of 1,000 refilled at 1,000 per day, on
 * {@code --keys} keys picked uniformly at random, so every key exists after the warm-up, is
 * updated on each visit, and never runs dry: every decision takes the "allowed" path. Each
 * library uses one Lettuce connection shared by all threads, and each thread makes blocking
 * calls (Sluice's {@code RateLimiter.check}, Bucket4j's {@code tryConsume}). Rounds alternate
 * the libraries so that outside load hits both alike; the summary adds the rounds up.
 *
 * <p>Per library: decisions per second; p50 and p99 latency of one decision; commands per
 * decision the client sent (round trips: a decision's commands are sequential); commands Redis
 * executed per decision (scripts' inner calls included); command microseconds per decision from
 * {@code INFO commandstats} (see {@link RedisStats} for how inner calls are not counted twice);
 * and redis-server process CPU per decision from {@code INFO cpu} (user + sys: command time plus
 * network reads, writes and the event loop).
 *
 * <p>The flood: one key with a bucket of 10 per day, already empty, hammered by every thread.
 * Sluice's store keeps its local refusal cache (on by default); Bucket4j has none.
 */
public final class RedisStoreLoad {

  private static final int SLUICE_BURST = 1_000;
  private static final Duration SLUICE_PERIOD = Duration.ofDays(1);

  private RedisStoreLoad() {}

  /** One library under test: a decision on key index k. */
  private interface Subject extends AutoCloseable {
    boolean decide(int k);

    /** Plain commands sent to Redis, by lower-case name, since the last reset; null: scripts. */
    Map<String, Long> sent();

    void resetSent();

    long degraded();
  }

  public static void main(String[] argv) throws Exception {
    int threads = 16;
    int seconds = 10;
    int keys = 100_000;
    int rounds = 3;
    int port = 0;
    String binary = "redis-server";
    for (int i = 0; i < argv.length; i++) {
      String v = i + 1 < argv.length ? argv[i + 1] : "";
      switch (argv[i]) {
        case "--threads" -> threads = Integer.parseInt(v);
        case "--seconds" -> seconds = Integer.parseInt(v);
        case "--keys" -> keys = Integer.parseInt(v);
        case "--rounds" -> rounds = Integer.parseInt(v);
        case "--port" -> port = Integer.parseInt(v);
        case "--redis-server" -> binary = v;
        default -> throw new IllegalArgumentException("unknown option: " + argv[i]
            + " (expected: --threads, --seconds, --keys, --rounds, --port, --redis-server)");
      }
      i++;
    }
    Process server = null;
    if (port == 0) {
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      server = new ProcessBuilder(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
          "--save", "", "--appendonly", "no", "--daemonize", "no")
          .redirectOutput(new File("/dev/null")).redirectErrorStream(true).start();
    }
    final Process started = server;
    try {
      run(port, threads, seconds, keys, rounds);
    } finally {
      if (started != null) {
        started.destroy();
        started.waitFor();
      }
    }
    System.exit(0);
  }

  private static void run(int port, int threads, int seconds, int keys, int rounds)
      throws Exception {
    String uri = "redis://127.0.0.1:" + port;
    RedisClient adminClient = RedisClient.create(uri);
    StatefulRedisConnection<String, String> adminConn = connect(adminClient);
    RedisCommands<String, String> admin = adminConn.sync();
    String version = admin.info("server").lines().filter(l -> l.startsWith("redis_version:"))
        .findFirst().orElse("?");
    System.out.printf(Locale.ROOT, "redis-server %s on 127.0.0.1:%d; %d CPUs; java %s; "
        + "%d threads, %d s x %d rounds, %,d keys%n", version, port,
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
        threads, seconds, rounds, keys);
    String run = Long.toString(System.nanoTime() % 1_000_000, 36);

    Result sluice = new Result("Sluice RedisStore");
    Result bucket4j = new Result("Bucket4j Lettuce CAS");
    try (Subject s = sluice(uri, "bench" + run + ":", keys, 0);
        Subject b = bucket4j(uri, "b4j" + run + ":", keys, 1_000, SLUICE_PERIOD)) {
      warm(s, keys, threads);
      warm(b, keys, threads);
      for (int r = 1; r <= rounds; r++) {
        measure(sluice, s, admin, threads, seconds, keys, r);
        measure(bucket4j, b, admin, threads, seconds, keys, r);
      }
    }
    System.out.println();
    System.out.println("Token bucket, many keys (all rounds):");
    System.out.println(Result.HEADER);
    System.out.println(sluice.row());
    System.out.println(bucket4j.row());
    System.out.printf(Locale.ROOT, "Sluice / Bucket4j: decisions/s x%.2f, p50 x%.2f, p99 x%.2f, "
        + "command us x%.2f, CPU us x%.2f%n",
        sluice.rate() / bucket4j.rate(), (double) sluice.hist.quantile(0.5)
            / bucket4j.hist.quantile(0.5),
        (double) sluice.hist.quantile(0.99) / bucket4j.hist.quantile(0.99),
        sluice.commandMicros / sluice.decisions() / (bucket4j.commandMicros
            / bucket4j.decisions()),
        sluice.cpuSeconds / sluice.decisions() / (bucket4j.cpuSeconds / bucket4j.decisions()));

    Result sluiceFlood = new Result("Sluice RedisStore, refusal cache");
    Result bucket4jFlood = new Result("Bucket4j Lettuce CAS");
    int floodSeconds = Math.max(2, seconds / 2);
    try (Subject s = sluice(uri, "flood" + run + ":", 1, 10_000);
        Subject b = bucket4j(uri, "b4jflood" + run + ":", 1, 10, SLUICE_PERIOD)) {
      for (int i = 0; i < 20; i++) {
        s.decide(0);
        b.decide(0);
      }
      measure(sluiceFlood, s, admin, threads, floodSeconds, 1, 1);
      measure(bucket4jFlood, b, admin, threads, floodSeconds, 1, 1);
    }
    System.out.println();
    System.out.println("Refused-key flood (one key, bucket of 10 per day, already empty):");
    System.out.println(Result.HEADER);
    System.out.println(sluiceFlood.row());
    System.out.println(bucket4jFlood.row());
    System.out.printf(Locale.ROOT, "allowed during the flood: Sluice %d, Bucket4j %d%n",
        sluiceFlood.allowed.sum(), bucket4jFlood.allowed.sum());
    adminConn.close();
    adminClient.shutdown();
  }

  private static <K, V> StatefulRedisConnection<K, V> connect(RedisClient client,
      RedisCodec<K, V> codec) throws InterruptedException {
    for (int i = 0; ; i++) {
      try {
        return client.connect(codec);
      } catch (RuntimeException e) {
        if (i == 100) {
          throw e;
        }
        Thread.sleep(50);
      }
    }
  }

  private static StatefulRedisConnection<String, String> connect(RedisClient client)
      throws InterruptedException {
    return connect(client, StringCodec.UTF8);
  }

  // ------------------------------------------------------------------ subjects

  private static Subject sluice(String uri, String prefix, int keys, int refusalCache)
      throws InterruptedException {
    Store store = RedisStore.builder().uri(uri).keyPrefix(prefix)
        .deadline(Duration.ofSeconds(2)).refusalCacheSize(refusalCache).build();
    RateLimiter limiter = RateLimiter.of(store);
    Rule rule = Rule.builder("api")
        .limit(refusalCache > 0
            ? Limit.tokenBucket("flood", 10, 10, SLUICE_PERIOD)
            : Limit.tokenBucket("rate", SLUICE_BURST, SLUICE_BURST, SLUICE_PERIOD))
        .build();
    Identity[] ids = new Identity[keys];
    for (int i = 0; i < keys; i++) {
      ids[i] = Identity.ip("10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255));
    }
    LongAdder degraded = new LongAdder();
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (limiter.check(rule, Identity.ip("192.0.2.1")).degraded()) {
      if (System.nanoTime() > until) {
        throw new IllegalStateException("Sluice's store did not connect to " + uri);
      }
      Thread.sleep(20);
    }
    return new Subject() {
      @Override
      public boolean decide(int k) {
        Decision d = limiter.check(rule, ids[k]);
        if (d.degraded()) {
          degraded.increment();
        }
        return d.allowed();
      }

      @Override
      public Map<String, Long> sent() {
        return null;
      }

      @Override
      public void resetSent() {}

      @Override
      public long degraded() {
        return degraded.sum();
      }

      @Override
      public void close() {
        store.close();
      }
    };
  }

  private static Subject bucket4j(String uri, String prefix, int keys, long capacity,
      Duration period) throws InterruptedException {
    RedisClient client = RedisClient.create(uri);
    Map<String, LongAdder> sent = new ConcurrentHashMap<>();
    client.addListener(new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        sent.computeIfAbsent(event.getCommand().getType().toString().toLowerCase(Locale.ROOT),
            x -> new LongAdder()).increment();
      }
    });
    StatefulRedisConnection<String, byte[]> conn =
        connect(client, RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    ProxyManager<String> manager = Bucket4jLettuce.casBasedBuilder(conn)
        .expirationAfterWrite(
            ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
        .build();
    BucketConfiguration config = BucketConfiguration.builder()
        .addLimit(l -> l.capacity(capacity).refillGreedy(capacity, period))
        .build();
    Supplier<BucketConfiguration> configSupplier = () -> config;
    String[] names = new String[keys];
    for (int i = 0; i < keys; i++) {
      names[i] = prefix + "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
    }
    return new Subject() {
      @Override
      public boolean decide(int k) {
        return manager.builder().build(names[k], configSupplier).tryConsume(1);
      }

      @Override
      public Map<String, Long> sent() {
        Map<String, Long> m = new java.util.HashMap<>();
        sent.forEach((name, n) -> m.put(name, n.sum()));
        return m;
      }

      @Override
      public void resetSent() {
        sent.clear();
      }

      @Override
      public long degraded() {
        return 0;
      }

      @Override
      public void close() {
        conn.close();
        client.shutdown();
      }
    };
  }

  // ------------------------------------------------------------------ measuring

  /** Touches every key once, then runs a few seconds of load for the JIT. */
  private static void warm(Subject s, int keys, int threads) throws InterruptedException {
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int first = t;
      Thread th = new Thread(() -> {
        for (int k = first; k < keys; k += threads) {
          s.decide(k);
        }
      });
      th.start();
      ts.add(th);
    }
    for (Thread t : ts) {
      t.join();
    }
    load(s, threads, 3, keys, new Result("warm-up"));
  }

  private static void measure(Result into, Subject s, RedisCommands<String, String> admin,
      int threads, int seconds, int keys, int round) throws InterruptedException {
    long degradedBefore = s.degraded();
    RedisStats.reset(admin);
    RedisStats before = RedisStats.read(admin);
    s.resetSent();
    Result one = new Result(into.name);
    load(s, threads, seconds, keys, one);
    RedisStats after = RedisStats.read(admin);
    Map<String, Long> sent = s.sent();
    long sentCalls;
    if (sent == null) {
      sent = new java.util.HashMap<>();
      for (String c : RedisStats.SCRIPT_COMMANDS) {
        if (after.calls(c) > 0) {
          sent.put(c, after.calls(c));
        }
      }
      sentCalls = after.scriptCalls();
    } else {
      sentCalls = sent.values().stream().mapToLong(Long::longValue).sum();
    }
    one.sentCalls = sentCalls;
    one.executedCalls = after.executedCalls();
    one.commandMicros = after.commandMicros(sent);
    one.cpuSeconds = after.cpuSeconds - before.cpuSeconds;
    one.degraded = s.degraded() - degradedBefore;
    System.out.printf(Locale.ROOT, "round %d %s%n  client sent %s%n  redis ran %s%n", round,
        one.row(), new java.util.TreeMap<>(sent), after.describe());
    into.add(one);
  }

  private static void load(Subject s, int threads, int seconds, int keys, Result into)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(threads);
    Histogram[] hs = new Histogram[threads];
    long t0 = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      Histogram h = new Histogram();
      hs[t] = h;
      Thread th = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long allowed = 0;
        while (!stop.get()) {
          int k = keys == 1 ? 0 : rnd.nextInt(keys);
          long start = System.nanoTime();
          boolean ok = s.decide(k);
          h.record(System.nanoTime() - start);
          allowed += ok ? 1 : 0;
        }
        into.allowed.add(allowed);
        done.countDown();
      });
      th.setDaemon(true);
      th.start();
    }
    Thread.sleep(seconds * 1000L);
    stop.set(true);
    done.await();
    into.nanos += System.nanoTime() - t0;
    for (Histogram h : hs) {
      into.hist.add(h);
    }
  }

  /** Totals over one or more runs. */
  private static final class Result {
    static final String HEADER = String.format(Locale.ROOT, "%-34s %12s %9s %9s %10s %10s %12s "
        + "%12s %9s", "library", "decisions/s", "p50 us", "p99 us", "sent/dec", "exec/dec",
        "cmd us/dec", "cpu us/dec", "degraded");

    final String name;
    final Histogram hist = new Histogram();
    final LongAdder allowed = new LongAdder();
    long nanos;
    long sentCalls;
    long executedCalls;
    double commandMicros;
    double cpuSeconds;
    long degraded;

    Result(String name) {
      this.name = name;
    }

    long decisions() {
      return hist.count();
    }

    double rate() {
      return decisions() / (nanos / 1e9);
    }

    void add(Result r) {
      hist.add(r.hist);
      allowed.add(r.allowed.sum());
      nanos += r.nanos;
      sentCalls += r.sentCalls;
      executedCalls += r.executedCalls;
      commandMicros += r.commandMicros;
      cpuSeconds += r.cpuSeconds;
      degraded += r.degraded;
    }

    String row() {
      double n = Math.max(1, decisions());
      return String.format(Locale.ROOT, "%-34s %,12.0f %9.1f %9.1f %10.4f %10.4f %12.3f %12.3f "
          + "%9d", name, rate(), hist.quantile(0.5) / 1e3, hist.quantile(0.99) / 1e3,
          sentCalls / n, executedCalls / n, commandMicros / n, cpuSeconds * 1e6 / n, degraded);
    }
  }
}
