package dev.sluice.gateway;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Challenge;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link RelayBenchmark}'s flood, answered three ways in one run: {@code refusal} (a refusing
 * rule's 429, the baseline), {@code page} (a challenging rule's puzzle page to a browser, the
 * challenge's own limit out of reach: every request a new page) and {@code limited} (the same
 * past the challenge's own limit, its default: every request the small "too many checks" 429).
 * The relay's user-space work per request and its allocation ({@code -prof gc}); the wire's
 * share is measured by load/gateway-bench.sh (targets sluice-flood, sluice-challenge-flood).
 *
 * <pre>
 * mvn -q -B -DskipTests -pl sluice-bench -am package
 * java -jar sluice-bench/target/benchmarks.jar ChallengeRelayBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
// As RelayBenchmark: on FastThreadLocal threads, Netty's leak detector off as `sluice serve` runs.
@Fork(value = 1, jvmArgsAppend = {"-Djmh.executor=CUSTOM",
    "-Djmh.executor.class=dev.sluice.bench.EventLoopThreads",
    "-Dio.netty.leakDetection.level=disabled"})
public class ChallengeRelayBenchmark {

  @Param({"refusal", "page", "limited"})
  public String answer;

  private RelayChannel relay;

  @Setup
  public void setup() {
    Rule.Builder flood = Rule.builder("flood")
        .limit(Limit.tokenBucket("flood", 1, 1, Duration.ofDays(1)));
    if (!answer.equals("refusal")) {
      flood.action(Rule.Action.CHALLENGE);
    }
    Challenge.Builder challenge = Challenge.builder();
    if (answer.equals("page")) {
      challenge.limit(1e9, Duration.ofMillis(10), 4, 10_000);
    }
    Policy policy = Policy.builder().rule(flood.build())
        .route(Route.builder("all").rule("flood").build())
        .challenge(challenge.build()).build();
    relay = new RelayChannel(policy, "GET /docs/x HTTP/1.1\r\nHost: sluice.example\r\n"
        + "User-Agent: wrk\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\n\r\n");
    flood();   // the one token: later requests are refused, challenged or limited
    for (int i = 0; i < 100; i++) {
      flood();   // past the challenge's own limit, for "limited"
    }
  }

  @Benchmark
  public int flood() {
    return relay.send();
  }

  @TearDown
  public void tearDown() {
    relay.close();
  }
}
