package dev.sluice.server.replay;

import dev.sluice.core.policy.Policy;
import dev.sluice.policy.PolicyLoader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The replay's load driver (issue 23): how many nginx {@code combined} lines a second
 * {@code sluice replay} decides with seed 000's default policy, against a parse-only pass of the
 * same file in the same run (the floor: reading and parsing the text), with 1 and 2 threads
 * partitioned by client; and the peak heap of the run. It lives in the replay's package to run
 * its engine without the command line's printing. Run it on the JVM options the launcher gives
 * {@code sluice replay} (the throughput collector, transparent huge pages). Commands
 * (docs/BENCHMARKS.md):
 *
 * <pre>
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.server.replay.ReplayLoad generate \
 *     /tmp/replay-10m.log 10000000 1000000
 * java -Xmx2g -XX:+UseParallelGC -XX:+UseTransparentHugePages \
 *     -cp sluice-bench/target/benchmarks.jar dev.sluice.server.replay.ReplayLoad run \
 *     /tmp/replay-10m.log 3
 * </pre>
 */
public final class ReplayLoad {

  private static final DateTimeFormatter CLF =
      DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ROOT).withZone(ZoneOffset.UTC);

  private ReplayLoad() {}

  public static void main(String[] args) throws Exception {
    if (args.length >= 4 && args[0].equals("generate")) {
      generate(Path.of(args[1]), Long.parseLong(args[2]), Integer.parseInt(args[3]));
    } else if (args.length >= 2 && args[0].equals("run")) {
      run(Path.of(args[1]), args.length > 2 ? Integer.parseInt(args[2]) : 3,
          args.length > 3 ? args[3] : "1,2");
    } else {
      System.err.println("usage: ReplayLoad generate FILE LINES CLIENTS | run FILE [ROUNDS] "
          + "[THREADS,...]");
      System.exit(64);
    }
  }

  /**
   * {@code lines} combined lines of {@code clients} distinct IPv4 clients over an hour: each
   * line a random client (so every client appears about lines / clients times), a seed 000
   * route by weight (reads, analysis, static files, writes), a browser's user agent.
   */
  static void generate(Path file, long lines, int clients) throws IOException {
    SplittableRandom random = new SplittableRandom(23);
    long start = Instant.parse("2025-06-01T00:00:00Z").getEpochSecond();
    String[] paths = {"/api/items/%d", "/api/analysis/report/%d", "/static/app-%d.js",
        "/records/%d"};
    String[] agents = {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        + "Chrome/126.0 Safari/537.36", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)"
        + " AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        "curl/8.5.0"};
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      String stamp = null;
      long stampSecond = -1;
      StringBuilder sb = new StringBuilder(256);
      for (long i = 0; i < lines; i++) {
        long second = start + i * 3600 / lines;
        if (second != stampSecond) {
          stampSecond = second;
          stamp = CLF.format(Instant.ofEpochSecond(second));
        }
        int c = random.nextInt(clients);
        int kind = random.nextInt(20);
        String method = kind == 19 ? "POST" : "GET";
        String path = String.format(Locale.ROOT, paths[kind < 10 ? 0 : kind < 13 ? 1 : kind < 17
            ? 2 : 3], random.nextInt(1000));
        sb.setLength(0);
        sb.append(10 + (c >>> 24 & 0x7f)).append('.').append(c >>> 16 & 0xff).append('.')
            .append(c >>> 8 & 0xff).append('.').append(c & 0xff).append(" - - [").append(stamp)
            .append("] \"").append(method).append(' ').append(path).append(" HTTP/1.1\" 200 ")
            .append(200 + random.nextInt(5000)).append(" \"https://example.com/\" \"")
            .append(agents[random.nextInt(agents.length)]).append("\"\n");
        w.append(sb);
      }
    }
    System.out.printf(Locale.ROOT, "wrote %s: %,d lines, %,d clients, %,d bytes%n", file, lines,
        clients, Files.size(file));
  }

  static void run(Path file, int rounds, String threadList) throws Exception {
    Policy policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    int maxKeys = PolicyLoader.loadDefault(Map.of()).config().store().maxKeys();
    LineFormat combined = Formats.of("combined");
    List<Integer> threads = new ArrayList<>();
    for (String t : threadList.split(",")) {
      threads.add(Integer.parseInt(t.trim()));
    }
    System.out.printf(Locale.ROOT, "%s, %,d bytes, %d cores, max heap %,d MB%n", file,
        Files.size(file), Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20);
    for (int round = 1; round <= rounds; round++) {
      for (int t : threads) {
        double parse = pass(policy, maxKeys, combined, file, t, true, round);
        double full = pass(policy, maxKeys, combined, file, t, false, round);
        System.out.printf(Locale.ROOT, "round %d threads %d: replay/parse-only %.2f%n", round, t,
            full / parse);
      }
    }
  }

  private static double pass(Policy policy, int maxKeys, LineFormat format, Path file,
      int threads, boolean parseOnly, int round) throws Exception {
    System.gc();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      pool.resetPeakUsage();
    }
    long gcBefore = gcMillis();
    Replay replay = new Replay(new Replay.Options(policy, null, List.of(file.toString()), format,
        threads, maxKeys, maxKeys, parseOnly), System.in, null);
    long cpu0 = cpuNanos();
    long t0 = System.nanoTime();
    Replay.Result r = replay.run();
    long nanos = System.nanoTime() - t0;
    long cpu = cpuNanos() - cpu0;
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    double rate = r.lines() / (nanos / 1e9);
    String decided = r.a() == null ? "" : String.format(Locale.ROOT,
        "  refused %,d  clients dropped %,d", r.a().refusedCount, r.a().clients.dropped);
    System.out.printf(Locale.ROOT, "round %d threads %d %-10s %,d lines in %.2f s: %,.0f "
        + "lines/s (process CPU %.2f s: %,.0f lines per CPU-second)  peak heap %,d MB  GC %,d ms%s%n",
        round, threads, parseOnly ? "parse-only" : "replay", r.lines(), nanos / 1e9, rate,
        cpu / 1e9, r.lines() / (cpu / 1e9), peak >> 20, gcMillis() - gcBefore, decided);
    return rate;
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static long gcMillis() {
    long ms = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ms += Math.max(0, gc.getCollectionTime());
    }
    return ms;
  }
}
