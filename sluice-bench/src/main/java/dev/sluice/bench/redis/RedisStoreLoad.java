package dev.sluice.bench.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sluice's Redis store against Bucket4j's Lettuce proxy manager, on the same local redis-server
 * with the same client concurrency (issues 4 and 9): a token bucket on many keys, then a flood
 * from one refused key.
 *
 * <pre>
 * cd /work/main   # the repository root; needs redis-server on the PATH (Debian: redis-server)
 * mvn -q -o -pl sluice-core,sluice-redis,sluice-bench -am package -DskipTests
 * # issue 9: asynchronous calls, 64 in flight from 1 thread, for both libraries
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.redis.RedisStoreLoad \
 *     --threads 1 --in-flight 64 --seconds 10 --keys 100000 --rounds 3
 * # issue 4: 16 threads making blocking calls
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.redis.RedisStoreLoad \
 *     --threads 16 --seconds 10 --keys 100000 --rounds 3
 * </pre>
 *
 * <p>Options: {@code --in-flight N} drives both libraries asynchronously ({@link Load}): the
 * {@code --threads} threads keep N calls outstanding between them (Sluice's
 * {@code RateLimiter.checkAsync}, Bucket4j's {@code asAsync()...tryConsume}); 0, the default,
 * makes each thread call and wait. {@code --port N} targets a redis-server already listening on
 * 127.0.0.1:N instead of starting a private one (its statistics are reset with
 * {@code CONFIG RESETSTAT}; its data is left alone: every key is under a fresh prefix);
 * {@code --redis-server PATH} picks the binary; {@code --no-flood} skips the flood;
 * {@code --only sluice} (or {@code bucket4j}) runs one library, for a profiler.
 *
 * <p>The limit, in both libraries: a token bucket of 1,000 refilled at 1,000 per day, on
 * {@code --keys} keys picked uniformly at random, so every key exists after the warm-up, is
 * updated on each visit, and never runs dry: every decision takes the "allowed" path. Each
 * library uses one Lettuce connection shared by all callers. Rounds alternate the libraries so
 * that outside load hits both alike; the summary adds the rounds up. The load average is read
 * from /proc/loadavg before and after each round.
 *
 * <p>Per library: decisions per second; p50 and p99 latency of one decision; commands per
 * decision the client sent (round trips: a decision's commands are sequential); commands Redis
 * executed per decision (scripts' inner calls included); command microseconds per decision from
 * {@code INFO commandstats} (see {@link RedisStats} for how inner calls are not counted twice);
 * redis-server process CPU per decision from {@code INFO cpu} (user + sys: command time plus
 * network reads, writes and the event loop); and the client's CPU per decision, this JVM's
 * process CPU time over the round (the library, Lettuce and the driver threads; the idle other
 * library's threads are in it too, at next to nothing).
 *
 * <p>The flood: one key with a bucket of 10 per day, already empty, hammered by every caller.
 * Sluice's store keeps its local refusal cache (on by default); Bucket4j has none.
 */
public final class RedisStoreLoad {

  private static final long CAPACITY = 1_000;
  private static final Duration PERIOD = Duration.ofDays(1);

  private RedisStoreLoad() {}

  public static void main(String[] argv) throws Exception {
    int threads = 16;
    int inFlight = 0;
    int seconds = 10;
    int keys = 100_000;
    int rounds = 3;
    int port = 0;
    boolean flood = true;
    String only = null;
    String binary = "redis-server";
    for (int i = 0; i < argv.length; i++) {
      String v = i + 1 < argv.length ? argv[i + 1] : "";
      switch (argv[i]) {
        case "--threads" -> threads = Integer.parseInt(v);
        case "--in-flight" -> inFlight = Integer.parseInt(v);
        case "--seconds" -> seconds = Integer.parseInt(v);
        case "--keys" -> keys = Integer.parseInt(v);
        case "--rounds" -> rounds = Integer.parseInt(v);
        case "--port" -> port = Integer.parseInt(v);
        case "--redis-server" -> binary = v;
        case "--only" -> only = v;
        case "--no-flood" -> {
          flood = false;
          i--;
        }
        default -> throw new IllegalArgumentException("unknown option: " + argv[i]
            + " (expected: --threads, --in-flight, --seconds, --keys, --rounds, --port, "
            + "--redis-server, --only sluice|bucket4j, --no-flood)");
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
      run(port, new Load(threads, inFlight), seconds, keys, rounds, flood, only);
    } finally {
      if (started != null) {
        started.destroy();
        started.waitFor();
      }
    }
    System.exit(0);
  }

  private static void run(int port, Load load, int seconds, int keys, int rounds, boolean flood,
      String only) throws Exception {
    String uri = "redis://127.0.0.1:" + port;
    RedisClient adminClient = RedisClient.create(uri);
    StatefulRedisConnection<String, String> adminConn = connect(adminClient, StringCodec.UTF8);
    RedisCommands<String, String> admin = adminConn.sync();
    String version = admin.info("server").lines().filter(l -> l.startsWith("redis_version:"))
        .findFirst().orElse("?");
    System.out.printf(Locale.ROOT, "redis-server %s on 127.0.0.1:%d; %d CPUs; java %s; %s, "
        + "%d s x %d rounds, %,d keys; load average %s%n", version, port,
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
        load.describe(), seconds, rounds, keys, loadAverage());
    String run = Long.toString(System.nanoTime() % 1_000_000, 36);

    Load.Result sluice = new Load.Result("Sluice RedisStore");
    Load.Result bucket4j = new Load.Result("Bucket4j Lettuce CAS");
    try (Subject s = Subject.sluice(uri, "bench" + run + ":", keys, CAPACITY, PERIOD, 0);
        Subject b = Subject.bucket4j(uri, "b4j" + run + ":", keys, CAPACITY, PERIOD)) {
      boolean both = only == null;
      if (both || only.equals("sluice")) {
        load.warm(s, keys);
      }
      if (both || only.equals("bucket4j")) {
        load.warm(b, keys);
      }
      for (int r = 1; r <= rounds; r++) {
        if (both || only.equals("sluice")) {
          measure(sluice, s, admin, load, seconds, keys, r);
        }
        if (both || only.equals("bucket4j")) {
          measure(bucket4j, b, admin, load, seconds, keys, r);
        }
      }
    }
    System.out.println();
    System.out.println("Token bucket, many keys (all rounds), " + load.describe() + ":");
    System.out.println(Load.Result.HEADER);
    System.out.println(sluice.row());
    System.out.println(bucket4j.row());
    System.out.printf(Locale.ROOT, "Sluice / Bucket4j: decisions/s x%.2f, p50 x%.2f, p99 x%.2f, "
        + "command us x%.2f, CPU us x%.2f%n",
        sluice.rate() / bucket4j.rate(), (double) sluice.hist.quantile(0.5)
            / bucket4j.hist.quantile(0.5),
        (double) sluice.hist.quantile(0.99) / bucket4j.hist.quantile(0.99),
        sluice.commandMicrosPerDecision() / bucket4j.commandMicrosPerDecision(),
        sluice.cpuMicros() / bucket4j.cpuMicros());

    if (flood) {
      Load.Result sluiceFlood = new Load.Result("Sluice RedisStore, refusal cache");
      Load.Result bucket4jFlood = new Load.Result("Bucket4j Lettuce CAS");
      int floodSeconds = Math.max(2, seconds / 2);
      try (Subject s = Subject.sluice(uri, "flood" + run + ":", 1, 10, PERIOD, 10_000);
          Subject b = Subject.bucket4j(uri, "b4jflood" + run + ":", 1, 10, PERIOD)) {
        for (int i = 0; i < 20; i++) {
          s.decide(0);
          b.decide(0);
        }
        measure(sluiceFlood, s, admin, load, floodSeconds, 1, 1);
        measure(bucket4jFlood, b, admin, load, floodSeconds, 1, 1);
      }
      System.out.println();
      System.out.println("Refused-key flood (one key, bucket of 10 per day, already empty):");
      System.out.println(Load.Result.HEADER);
      System.out.println(sluiceFlood.row());
      System.out.println(bucket4jFlood.row());
      System.out.printf(Locale.ROOT, "allowed during the flood: Sluice %d, Bucket4j %d%n",
          sluiceFlood.allowed.sum(), bucket4jFlood.allowed.sum());
    }
    adminConn.close();
    adminClient.shutdown();
  }

  static <K, V> StatefulRedisConnection<K, V> connect(RedisClient client, RedisCodec<K, V> codec)
      throws InterruptedException {
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

  /** This JVM's CPU time: the client's side of a decision (library, driver, Lettuce). */
  private static long clientCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "?";
    }
  }

  private static void measure(Load.Result into, Subject s, RedisCommands<String, String> admin,
      Load load, int seconds, int keys, int round) throws InterruptedException {
    long degradedBefore = s.degraded();
    String loadBefore = loadAverage();
    RedisStats.reset(admin);
    RedisStats before = RedisStats.read(admin);
    s.resetSent();
    Load.Result one = new Load.Result(into.name);
    long clientBefore = clientCpuNanos();
    load.run(s, seconds, keys, one);
    one.clientCpuSeconds = (clientCpuNanos() - clientBefore) / 1e9;
    RedisStats after = RedisStats.read(admin);
    Map<String, Long> sent = s.sent();
    long sentCalls;
    if (sent == null) {
      sent = new HashMap<>();
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
    System.out.printf(Locale.ROOT, "round %d %s%n  load average %s -> %s%n  client sent %s%n"
        + "  redis ran %s%n", round, one.row(), loadBefore, loadAverage(), new TreeMap<>(sent),
        after.describe());
    into.add(one);
  }
}
