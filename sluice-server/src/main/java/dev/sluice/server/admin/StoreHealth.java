package dev.sluice.server.admin;

import dev.sluice.redis.RedisStore;
import dev.sluice.policy.PolicyFormat;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the server knows about its store, from the store's own events: ready (connected,
 * scripts loaded; once), connected now, and its circuit. {@code /readyz} and {@code /metrics}
 * read it; a memory store is ready from the start.
 *
 * <p>Readiness stays once reached. A Redis outage after start leaves every instance serving
 * degraded decisions (each rule's {@code onStoreError}); turning it into "not ready" on every
 * instance at once would take the whole fleet out of its load balancer: the outage the rules'
 * fail-open settings exist to prevent. The body still says whether the store is connected.
 */
public final class StoreHealth implements RedisStore.Listener {

  /** How the start-up wait ended. */
  public enum Start { READY, AUTH_FAILED, TIMED_OUT }

  private final String store;
  private final CompletableFuture<Start> start = new CompletableFuture<>();
  private final LongAdder connectFailures = new LongAdder();
  private final LongAdder circuitOpenings = new LongAdder();
  private volatile boolean ready;
  /** Every listener of the process is bound: until then /readyz is 503 whatever the store. */
  private volatile boolean listening;
  private volatile boolean connected;
  private volatile String problem;
  private volatile String circuit = "closed";

  private StoreHealth(String store, boolean ready) {
    this.store = store;
    this.ready = ready;
    this.connected = ready;
    this.problem = ready ? null : "connecting";
    if (ready) {
      start.complete(Start.READY);
    }
  }

  /** An in-process store: ready, connected, never a circuit. */
  public static StoreHealth memory() {
    return new StoreHealth("memory", true);
  }

  /** A remote store, named as logs show it (password redacted), not ready until it says so. */
  public static StoreHealth remote(String store) {
    return new StoreHealth(store, false);
  }

  @Override
  public void on(RedisStore.Event event, String detail) {
    switch (event) {
      case READY -> {
        ready = true;
        connected = true;
        problem = null;
        start.complete(Start.READY);
      }
      case CONNECT_FAILED -> {
        connectFailures.increment();
        problem = "cannot reach it: " + detail;
      }
      case AUTH_FAILED -> {
        connectFailures.increment();
        problem = "authentication failed: " + detail;
        start.complete(Start.AUTH_FAILED);
      }
      case CONNECTION_LOST -> {
        connected = false;
        problem = "connection lost to " + detail;
      }
      case CONNECTION_RESTORED -> {
        connected = true;
        problem = null;
      }
      case CIRCUIT_OPENED -> {
        circuitOpenings.increment();
        circuit = "open";
      }
      case CIRCUIT_HALF_OPEN -> circuit = "half_open";
      case CIRCUIT_CLOSED -> circuit = "closed";
      default -> { }
    }
  }

  /** Waits up to {@code wait} for the first outcome: ready, or credentials refused. */
  public Start awaitStart(Duration wait) throws InterruptedException {
    try {
      return start.get(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return Start.TIMED_OUT;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  public String store() {
    return store;
  }

  public boolean ready() {
    return ready;
  }

  /** Every listener is bound: {@code /readyz} now reports the store's readiness. */
  public void listening() {
    listening = true;
  }

  /** What {@code /readyz} answers: the listeners bound and the store ready. */
  public boolean readyToServe() {
    return ready && listening;
  }

  public boolean connected() {
    return connected;
  }

  /** The last thing that went wrong, or null. */
  public String problem() {
    return problem;
  }

  /** {@code closed}, {@code open} or {@code half_open}. */
  public String circuit() {
    return circuit;
  }

  public long connectFailures() {
    return connectFailures.sum();
  }

  public long circuitOpenings() {
    return circuitOpenings.sum();
  }

  /** The {@code /readyz} body: short JSON, with the reason when something is wrong. */
  String readiness() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", ready && listening ? "ready" : "not ready");
    body.put("store", store);
    if (!listening) {
      body.put("listeners", "starting");
    }
    if (!"memory".equals(store)) {
      body.put("connected", connected);
      body.put("circuit", circuit);
    }
    String p = problem;
    if (p != null) {
      body.put("reason", p);
    }
    return PolicyFormat.toJson(body) + "\n";
  }
}
