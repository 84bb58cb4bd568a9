package dev.sluice.bench;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.RequestView;
import dev.sluice.core.policy.Route;
import java.time.Duration;
import java.util.List;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code Policy.select} alone, on seed 000's routes with a global backstop: what matching a
 * request to its rules and reading its identity costs per request, for a new client each time
 * (the replay's and a proxy's case: 4,096 clients in turn, each request a view of its own whose
 * address is resolved once, as the gateway's head does). Sluice only; with its allocation
 * ({@code -prof gc}).
 *
 * <pre>
 * java -jar sluice-bench/target/benchmarks.jar PolicySelectBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PolicySelectBenchmark {

  private static final int CLIENTS = 4096;
  private static final String[] PATHS = {"/api/analysis/run", "/records/17", "/static/app.js",
      "/api/items"};

  private Policy policy;
  private View[] views;
  private int next;

  @Setup
  public void setup() {
    policy = Policy.builder()
        .rule(bucket("connect", 120, 240)).rule(bucket("read", 120, 240))
        .rule(bucket("analysis", 15, 30)).rule(bucket("write", 30, 60))
        .rule(Rule.builder("backstop")
            .limit(Limit.fixedWindow("backstop", 600, Duration.ofMinutes(1))).build())
        .global("backstop")
        .route(Route.builder("health").method("GET").path("/healthz").exempt(true).build())
        .route(Route.builder("connect").websocket(true).rule("connect").build())
        .route(Route.builder("analysis").path("/api/analysis/**").rule("analysis").build())
        .route(Route.builder("read").method("GET").method("HEAD").path("/api/**")
            .path("/records/**").rule("read").build())
        .route(Route.builder("static").method("GET").method("HEAD").build())
        .route(Route.builder("write").rule("write").build())
        .build();
    views = new View[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
      views[i] = new View(PATHS[i % PATHS.length],
          "198.51." + (100 + (i >> 8)) + "." + (i & 255));
    }
  }

  private static Rule bucket(String name, int burst, int perMinute) {
    return Rule.builder(name)
        .limit(Limit.tokenBucket(name, burst, perMinute, Duration.ofMinutes(1))).build();
  }

  @Benchmark
  public Check select() {
    View v = views[next];
    next = (next + 1) & (CLIENTS - 1);
    v.resolved = null;   // a new request: its address is resolved again, once
    return policy.select(v);
  }

  /** A parsed request: its address resolved once per request, as the gateway's head does. */
  static final class View implements RequestView {
    private final String path;
    private final String peer;
    ClientAddress resolved;

    View(String path, String peer) {
      this.path = path;
      this.peer = peer;
    }

    @Override
    public String method() {
      return "GET";
    }

    @Override
    public String path() {
      return path;
    }

    @Override
    public List<String> headers(String name) {
      return List.of();
    }

    @Override
    public String header(String name) {
      return null;
    }

    @Override
    public String cookie(String name) {
      return null;
    }

    @Override
    public String query(String name) {
      return null;
    }

    @Override
    public String peer() {
      return peer;
    }

    @Override
    public boolean websocketUpgrade() {
      return false;
    }

    @Override
    public ClientAddress clientAddress(ClientAddressResolver resolver) {
      if (resolved == null) {
        resolved = resolver.resolve(peer, this::headers);
      }
      return resolved;
    }
  }
}
