package dev.sluice.server.gateway;

import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.core.policy.Challenge;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.policy.PolicyConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.URI;
import java.nio.charset.StandardCharsets;
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
@Fork(value = 1, jvmArgsAppend = {"-Djmh.executor=CUSTOM",
    "-Djmh.executor.class=dev.sluice.bench.EventLoopThreads"})
public class ChallengeRelayBenchmark {

  @Param({"refusal", "page", "limited"})
  public String answer;

  private EmbeddedChannel channel;
  private ByteBuf request;

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
    PolicyConfig config = PolicyConfig.of(policy);
    RateLimiter limiter = RateLimiter.of(Store.memory(Ticker.system(), 100_000));
    Snapshot.Source snapshots = new Snapshot.Source(() -> config, limiter, GatewayEvents.none());
    Upstream up = Upstream.of(URI.create("http://127.0.0.1:9"));
    channel = new EmbeddedChannel(new RelayHandler(snapshots, GatewayEvents.none(), up,
        new UpstreamPool(up), null, "http", p -> { }));
    channel.config().setAllocator(PooledByteBufAllocator.DEFAULT);
    byte[] bytes = ("GET /docs/x HTTP/1.1\r\nHost: sluice.example\r\nUser-Agent: wrk\r\n"
        + "Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
    request = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
    flood();   // the one token: later requests are refused, challenged or limited
    for (int i = 0; i < 100; i++) {
      flood();   // past the challenge's own limit, for "limited"
    }
  }

  @Benchmark
  public int flood() {
    channel.writeInbound(request.retainedDuplicate());
    ByteBuf out = channel.readOutbound();
    int n = out.readableBytes();
    out.release();
    return n;
  }

  @TearDown
  public void tearDown() {
    channel.finishAndReleaseAll();
    request.release();
  }
}
