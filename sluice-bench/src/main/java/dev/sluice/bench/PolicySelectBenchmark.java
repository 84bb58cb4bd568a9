package dev.sluice.bench;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.RequestView;
import dev.sluice.policy.PolicyLoader;
import java.util.List;
import java.util.Map;
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
 * {@code Policy.select} alone, on the embedded default policy (seed 000's routes and seed 004's
 * global backstop, as {@code sluice serve} and {@code sluice replay} run it): what matching a
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
  public void setup() throws Exception {
    policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    views = new View[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
      views[i] = new View(PATHS[i % PATHS.length],
          "198.51." + (100 + (i >> 8)) + "." + (i & 255));
    }
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
