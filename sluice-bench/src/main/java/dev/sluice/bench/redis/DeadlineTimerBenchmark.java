package dev.sluice.bench.redis;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What a deadline costs per call, for issue 9's choice of timer for the Redis store: each
 * operation arms a 50 ms deadline for a call and disarms it when the call answers (as every
 * answered call does), the way each candidate would be used.
 *
 * <ul>
 *   <li>{@code wheel}: Netty's {@link HashedWheelTimer}, 5 ms tick: what Lettuce's command
 *       timeout does per command (newTimeout, then cancel on completion), on the store's timer.
 *   <li>{@code jdk}: {@link CompletableFuture#orTimeout}: the JDK's shared delay scheduler (a
 *       heap under a lock; a cancelled task is removed from it).
 *   <li>{@code executor}: a Netty event executor's {@code schedule}/{@code cancel} (Lettuce's
 *       computation pool): a heap owned by the executor's thread, reached by a task hand-off.
 *   <li>{@code none}: the future alone, the floor.
 * </ul>
 *
 * <pre>
 * java -jar sluice-bench/target/benchmarks.jar DeadlineTimerBenchmark -f 1 -wi 3 -w 2s -i 5 \
 *     -r 2s -t 2 -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class DeadlineTimerBenchmark {

  private static final long DEADLINE_MS = 50;
  private static final TimerTask NOTHING = t -> { };

  private HashedWheelTimer wheel;
  private DefaultEventExecutor executor;

  @Setup
  public void setUp() {
    wheel = new HashedWheelTimer(5, TimeUnit.MILLISECONDS);
    wheel.start();
    executor = new DefaultEventExecutor();
  }

  @TearDown
  public void tearDown() {
    wheel.stop();
    executor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  @Benchmark
  public Object none() {
    CompletableFuture<Object> call = new CompletableFuture<>();
    call.complete(this);
    return call;
  }

  @Benchmark
  public Object wheel() {
    CompletableFuture<Object> call = new CompletableFuture<>();
    Timeout t = wheel.newTimeout(NOTHING, DEADLINE_MS, TimeUnit.MILLISECONDS);
    call.complete(this);
    t.cancel();
    return call;
  }

  @Benchmark
  public Object jdk() {
    CompletableFuture<Object> call = new CompletableFuture<>();
    call.orTimeout(DEADLINE_MS, TimeUnit.MILLISECONDS);
    call.complete(this);
    return call;
  }

  @Benchmark
  public Object executor() {
    CompletableFuture<Object> call = new CompletableFuture<>();
    ScheduledFuture<?> f = executor.schedule(() -> { }, DEADLINE_MS, TimeUnit.MILLISECONDS);
    call.complete(this);
    f.cancel(false);
    return call;
  }
}
