package dev.sluice.gateway;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The HTTP/1.1 relay's refused path, its user-space work alone: one client flooding a limited
 * route, each request read from a buffer as if it had arrived, decided by the in-memory store,
 * answered with its 429, the answer taken from the channel and released. No socket and no
 * kernel: what the relay itself costs per refusal, and what it allocates ({@code -prof gc}:
 * {@code gc.alloc.rate.norm}, bytes per refusal). In the gateway's package, for its
 * package-private handler. The gateway benchmark (load/gateway-bench.sh, targets sluice-flood and
 * nginx-flood) measures the same path through the kernel against nginx.
 *
 * <pre>
 * mvn -q -B -DskipTests -pl sluice-bench -am package
 * java -jar sluice-bench/target/benchmarks.jar RelayBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
// Netty recycles its buffer and write objects on its own (FastThreadLocal) threads only: the
// benchmark runs on such threads, or their allocations would be counted, which an event loop
// never makes (a JFR allocation profile of `sluice serve` under a flood shows none). Netty's leak
// detector off, as `sluice serve` runs (Main): its sampled wrappers are ~17 B a request.
@Fork(value = 1, jvmArgsAppend = {"-Djmh.executor=CUSTOM",
    "-Djmh.executor.class=dev.sluice.bench.EventLoopThreads",
    "-Dio.netty.leakDetection.level=disabled"})
public class RelayBenchmark {

  private RelayChannel relay;

  @Setup
  public void setup() {
    Policy policy = Policy.builder()
        .rule(Rule.builder("flood").limit(Limit.tokenBucket("flood", 1, 1, Duration.ofDays(1)))
            .build())
        .route(Route.builder("all").rule("flood").build())
        .build();
    relay = new RelayChannel(policy, "GET /api/analysis/x HTTP/1.1\r\nHost: sluice.example\r\n"
        + "User-Agent: wrk\r\nAccept: */*\r\n\r\n");
    refuse();   // the one token: later requests are refused
  }

  @Benchmark
  public int refuse() {
    return relay.send();
  }

  @TearDown
  public void tearDown() {
    relay.close();
  }
}
