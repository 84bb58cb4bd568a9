package dev.sluice.bench.rls;

import dev.sluice.bench.redis.Histogram;
import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitRequest;
import dev.sluice.rls.envoy.RateLimitResponse;
import dev.sluice.rls.envoy.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Load driver for the Envoy rate limit service (issue 11): {@code ShouldRateLimit} over gRPC
 * with 1 and 3 descriptors per request, on the memory store and on a local redis-server, beside
 * two HTTP requests to the same server for scale: {@code POST /v1/check} on the decision API's
 * own listener ({@code --check-api}; the same decision over HTTP) and a {@code GET} proxied to
 * the built-in demo upstream under one rule.
 *
 * <pre>
 * cd /work/main   # the repository root; redis-server on the PATH for the Redis rows
 * mvn -q -o -pl sluice-server,sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.rls.RlsLoad \
 *     --jar sluice-server/target/sluice.jar --seconds 10 --in-flight 64 --rounds 3
 * </pre>
 *
 * <p>The server under test is a separate {@code java -jar sluice.jar serve} process, so its CPU
 * is read alone: {@code /proc/PID/stat} user + system time over the measured seconds, divided by
 * the requests answered. Every limit is a token bucket far above the offered load (every decision
 * takes the "allowed" path, which writes), on 10,000 users, 1,000 addresses and 100 paths picked
 * at random. Each server is warmed with 5 s of each gRPC shape before its first row. The driver
 * keeps {@code --in-flight} requests outstanding (gRPC's async stub on one
 * channel; the JDK's HTTP client for HTTP) and records each request's latency. Each row warms up
 * for 5 s, then measures; rounds run the rows in turn and the table shows the median round.
 * Options: {@code --only grpc|http}, {@code --no-redis}, {@code --redis-server PATH}.
 */
public final class RlsLoad {

  static final String POLICY = String.join("\n",
      "rules:",
      "  bench:",
      "    limits: [{type: token-bucket, burst: 1000000, refill: 1000000, period: 1s}]",
      "routes:",
      "  - {name: all, paths: [\"/**\"], rules: [bench]}",
      "domains:",
      "  - domain: bench",
      "    descriptors:",
      "      - key: user",
      "        limits: [{type: token-bucket, burst: 1000000, refill: 1000000, period: 1s}]",
      "      - key: ip",
      "        limits: [{type: token-bucket, burst: 1000000, refill: 1000000, period: 1s}]",
      "      - key: path",
      "        limits: [{type: token-bucket, burst: 1000000, refill: 1000000, period: 1s}]",
      "");

  record Row(String name, double perSecond, long p50, long p99, double cpuMicros, int descriptors) {}

  public static void main(String[] args) throws Exception {
    Path jar = Path.of("sluice-server/target/sluice.jar");
    int seconds = 10;
    int inFlight = 64;
    int rounds = 3;
    String only = null;
    boolean redis = true;
    String redisBinary = "redis-server";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--jar" -> jar = Path.of(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--in-flight" -> inFlight = Integer.parseInt(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--only" -> only = args[++i];
        case "--no-redis" -> redis = false;
        case "--redis-server" -> redisBinary = args[++i];
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    Path policy = Files.createTempFile("sluice-rls-bench", ".yaml");
    Files.writeString(policy, POLICY);
    System.out.printf(Locale.ROOT, "%d CPUs; java %s; %d s per row, %d in flight, %d rounds%n",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), seconds,
        inFlight, rounds);
    List<List<Row>> all = new ArrayList<>();
    Process redisProcess = null;
    int redisPort = -1;
    try {
      if (redis) {
        redisPort = freePort();
        redisProcess = new ProcessBuilder(redisBinary, "--port", Integer.toString(redisPort),
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        awaitPort(redisPort);
      }
      for (int r = 0; r < rounds; r++) {
        List<Row> rows = new ArrayList<>();
        rows.addAll(runServer(jar, policy, null, seconds, inFlight, only));
        if (redis) {
          rows.addAll(runServer(jar, policy, "redis://127.0.0.1:" + redisPort, seconds,
              inFlight, only));
        }
        rows.forEach(RlsLoad::print);
        all.add(rows);
      }
    } finally {
      if (redisProcess != null) {
        redisProcess.destroy();
        redisProcess.waitFor(10, TimeUnit.SECONDS);
      }
    }
    System.out.println("\nmedian of " + rounds + " rounds (by requests/s):");
    System.out.println("| row | requests/s | descriptors/s | p50 µs | p99 µs | server CPU µs/request"
        + " | per descriptor |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    for (int i = 0; i < all.get(0).size(); i++) {
      List<Row> same = new ArrayList<>();
      for (List<Row> round : all) {
        same.add(round.get(i));
      }
      same.sort((a, b) -> Double.compare(a.perSecond, b.perSecond));
      Row m = same.get(same.size() / 2);
      System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | %d | %d | %.1f | %.1f |%n", m.name,
          m.perSecond, m.perSecond * m.descriptors, m.p50, m.p99, m.cpuMicros,
          m.cpuMicros / m.descriptors);
    }
  }

  static void print(Row r) {
    System.out.printf(Locale.ROOT, "%-32s %,10.0f req/s  p50 %6d us  p99 %6d us  CPU %6.1f us/req%n",
        r.name, r.perSecond, r.p50, r.p99, r.cpuMicros);
  }

  /** Starts one server process on {@code store} and measures every row against it. */
  static List<Row> runServer(Path jar, Path policy, String store, int seconds, int inFlight,
      String only) throws Exception {
    int http = freePort();
    int grpc = freePort();
    int check = freePort();
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m", "-jar",
        jar.toString(), "serve", "--config", policy.toString(), "--listen", "127.0.0.1:" + http,
        "--admin", "off", "--rls", "127.0.0.1:" + grpc, "--check-api", "127.0.0.1:" + check));
    if (store != null) {
      cmd.addAll(List.of("--store", store));
    }
    Process server = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String storeName = store == null ? "memory" : "redis";
    List<Row> rows = new ArrayList<>();
    try {
      awaitPort(grpc);
      awaitPort(http);
      awaitPort(check);
      ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", grpc).usePlaintext()
          .build();
      try {
        RateLimitServiceGrpc.RateLimitServiceStub warm = RateLimitServiceGrpc.newStub(channel);
        // A fresh server JVM compiles its hot paths in the first seconds: warm every path the
        // rows take before the first row measures, so no row pays for another's JIT.
        run(() -> grpcCall(warm, 1), inFlight, 5, null);
        run(() -> grpcCall(warm, 3), inFlight, 5, null);
        if (only == null || only.equals("grpc")) {
          for (int n : new int[] {1, 3}) {
            RateLimitServiceGrpc.RateLimitServiceStub stub = RateLimitServiceGrpc.newStub(channel);
            rows.add(measure("gRPC " + storeName + ", " + n + " descriptor" + (n > 1 ? "s" : ""),
                server.pid(), seconds, inFlight, n, () -> grpcCall(stub, n)));
          }
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
      if (only == null || only.equals("http")) {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        URI checkUri = URI.create("http://127.0.0.1:" + check + "/v1/check");
        rows.add(measure("HTTP " + storeName + ", POST /v1/check, 1", server.pid(), seconds,
            inFlight, 1, () -> client.sendAsync(HttpRequest.newBuilder(checkUri)
                .POST(HttpRequest.BodyPublishers.ofString("{\"domain\":\"bench\",\"descriptors\":"
                    + "[{\"entries\":[{\"key\":\"user\",\"value\":\"u" + rnd(10_000) + "\"}]}]}"))
                .build(), HttpResponse.BodyHandlers.discarding()).thenApply(r -> null)));
        URI get = URI.create("http://127.0.0.1:" + http + "/api/x");
        rows.add(measure("HTTP " + storeName + ", GET proxied, 1 rule", server.pid(), seconds,
            inFlight, 1, () -> client.sendAsync(HttpRequest.newBuilder(get)
                .header("X-Bench", "u" + rnd(10_000)).build(),
                HttpResponse.BodyHandlers.discarding()).thenApply(r -> null)));
      }
    } finally {
      server.destroy();
      server.waitFor(10, TimeUnit.SECONDS);
    }
    return rows;
  }

  static int rnd(int n) {
    return ThreadLocalRandom.current().nextInt(n);
  }

  static CompletableFuture<Void> grpcCall(RateLimitServiceGrpc.RateLimitServiceStub stub, int n) {
    RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain("bench");
    b.addDescriptors(d("user", "u" + rnd(10_000)));
    if (n > 1) {
      b.addDescriptors(d("ip", "10.0." + rnd(4) + "." + rnd(250)));
      b.addDescriptors(d("path", "/p" + rnd(100)));
    }
    CompletableFuture<Void> f = new CompletableFuture<>();
    stub.shouldRateLimit(b.build(), new StreamObserver<>() {
      @Override
      public void onNext(RateLimitResponse value) {
        if (value.getOverallCode() != RateLimitResponse.Code.OK) {
          f.completeExceptionally(new IllegalStateException("refused: " + value));
        }
      }

      @Override
      public void onError(Throwable t) {
        f.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        f.complete(null);
      }
    });
    return f;
  }

  static RateLimitDescriptor d(String key, String value) {
    return RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder()
        .setKey(key).setValue(value)).build();
  }

  /** Warms up for 5 s, then keeps {@code inFlight} calls outstanding for {@code seconds}. */
  static Row measure(String name, long pid, int seconds, int inFlight, int descriptors,
      Supplier<CompletableFuture<Void>> call) throws Exception {
    run(call, inFlight, 5, null);
    Histogram h = new Histogram();
    long cpu0 = cpuTicks(pid);
    long t0 = System.nanoTime();
    long n = run(call, inFlight, seconds, h);
    long elapsed = System.nanoTime() - t0;
    long cpu1 = cpuTicks(pid);
    double cpuMicros = (cpu1 - cpu0) * 10_000.0 / n; // 100 ticks per second
    return new Row(name, n * 1e9 / elapsed, h.quantile(0.5) / 1000, h.quantile(0.99) / 1000,
        cpuMicros, descriptors);
  }

  static long run(Supplier<CompletableFuture<Void>> call, int inFlight, int seconds,
      Histogram h) throws Exception {
    Semaphore window = new Semaphore(inFlight);
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      window.acquire();
      long start = System.nanoTime();
      call.get().whenComplete((v, e) -> {
        if (e != null) {
          failed.incrementAndGet();
        } else if (h != null) {
          synchronized (h) {
            h.record(System.nanoTime() - start);
          }
        }
        done.incrementAndGet();
        window.release();
      });
    }
    window.acquire(inFlight);
    if (failed.get() > 0) {
      throw new IllegalStateException(failed.get() + " calls failed");
    }
    return done.get();
  }

  static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static void awaitPort(int port) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < end) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException("nothing listens on 127.0.0.1:" + port + " after 60 s");
  }

  private RlsLoad() {}

}
