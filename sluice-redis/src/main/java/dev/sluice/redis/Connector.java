package dev.sluice.redis;

import dev.sluice.core.StoreException;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.channel.EventLoop;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

/**
 * Connects the store to Redis before it serves, and says what happens. Ready means connected,
 * authenticated, the scripts loaded on every master, and the decision path warmed by 2,048
 * calls (64 at a time, at cost 0: nothing is stored; at most 1 s of them, for a Redis far
 * away). Why warm: a cold client answers its
 * first burst late. On a 2-vCPU VM a cold burst of 64 threads x 40 decisions took 421-660 ms
 * with 0-64 of them degraded; warmed, 64-276 ms with none, for 100-300 ms more at start.
 *
 * <p>Until ready, attempts repeat in the background (50 ms doubling to 1 s). Logs: one line
 * when attempts start failing (an ERROR naming NOAUTH or WRONGPASS when Redis refuses the
 * credentials, which retrying will not fix), one when the store is ready; each failed attempt
 * is an event for a metric. On a cluster the seeds are probed with a plain connection first,
 * because a cluster connect that fails logs Lettuce's own warning for every seed on every try.
 *
 * <p>With {@linkplain RedisStore.Builder#eventLoops event loops}, one attempt opens every
 * {@link Lanes lane}: the shared connection, then one per loop; the store is ready when all of
 * them are (the library is loaded once, through the shared one, and the warm-up spreads its
 * waves over all of them). Closing closes the loops' connections first, on their loops, which
 * must therefore still run.
 */
final class Connector implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
  static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(2);
  private static final long FIRST_RETRY_MILLIS = 50;
  private static final long MAX_RETRY_MILLIS = 1000;
  /** Warm-up decisions before ready, and how many at once; see the class comment. */
  static final int WARM_UP_CALLS = 2048;
  static final int WARM_UP_IN_FLIGHT = 64;
  private static final long WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final int LETTUCE_QUEUE_FACTOR = 4;

  private final Endpoint endpoint;
  private final BiFunction<Integer, Library.Conn, CompletableFuture<?>> warmer;
  private final Library library;
  private final Events events;
  private final String degraded;
  private final ClientResources resources;
  private final AbstractRedisClient client;
  /** False for the application's client: left open on close, its timeouts not the deadline. */
  private final boolean owned;
  private final RedisClient probe;
  private final List<LoopClient> loopClients = new ArrayList<>();
  private final Lanes lanes;
  private final ScheduledThreadPoolExecutor thread;
  private final HashedWheelTimer timer;
  private final int warmInFlight;
  private final CompletableFuture<Void> started = new CompletableFuture<>();
  private final Watch watch;
  private volatile boolean closed;
  private String failing;
  private int failedAttempts;
  private long failingSince;
  private long warmStart;

  Connector(RedisStore.Builder b, Library library, Events events,
      BiFunction<Integer, Library.Conn, CompletableFuture<?>> warmer, Runnable restored) {
    this.endpoint = b.endpoint;
    this.warmer = warmer;
    this.library = library;
    this.events = events;
    this.degraded = b.fallback != null ? "answered by the fallback store"
        : "each rule's onStoreError";
    this.timer = Threads.timer(b.deadlineNanos);
    this.owned = b.client == null;
    this.resources = !owned ? b.client.getResources() : ClientResources.builder()
        .threadFactoryProvider(Threads.provider())
        .timer(timer)
        // Lettuce records every command's latency when LatencyUtils is on the class path (a
        // map lookup and a histogram per command, on the I/O thread); nothing here reads them.
        .commandLatencyRecorder(CommandLatencyRecorder.disabled())
        .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(500), 2,
            TimeUnit.MILLISECONDS))
        .build();
    SocketOptions socket = SocketOptions.builder().connectTimeout(Duration.ofSeconds(1))
        .keepAlive(true).build();
    // A call that timed out stays in Lettuce's stack until Redis answers it (replies come in
    // order). With room for only maxInFlight, a stall of the client left the stack full of
    // them and Lettuce refused every call after it at once ("Internal stack size exceeded")
    // until the replies caught up: one stall became seconds of failures. The store's own
    // semaphore still admits at most maxInFlight calls; this is room for their leftovers.
    int queue = b.maxInFlight * LETTUCE_QUEUE_FACTOR;
    // Within the bound: 64 at once overflowed the queue of a store with maxInFlight below 16,
    // which then never became ready.
    this.warmInFlight = Math.min(WARM_UP_IN_FLIGHT, b.maxInFlight);
    TimeoutOptions timeouts = TimeoutOptions.builder()
        .timeoutSource(new CommandDeadline(b.deadlineNanos)).build();
    for (RedisURI uri : endpoint.uris()) {
      uri.setTimeout(HANDSHAKE_TIMEOUT);
    }
    if (!owned) {
      this.client = b.client;
      this.probe = null;
    } else if (endpoint.cluster()) {
      if (b.eventLoops != null) {
        LOG.log(System.Logger.Level.INFO, "sluice-redis: {0} is a cluster: its connections stay "
            + "on the store''s own I/O threads (event loops serve a standalone server only)",
            endpoint);
      }
      RedisClusterClient cluster = RedisClusterClient.create(resources, endpoint.uris());
      cluster.setOptions(ClusterClientOptions.builder()
          .autoReconnect(true)
          // Node connections open lazily on first use, so commands must wait for them; the
          // command timeout (the deadline) and the request queue bound what waits.
          .disconnectedBehavior(ClientOptions.DisconnectedBehavior.DEFAULT)
          .requestQueueSize(queue)
          .timeoutOptions(timeouts)
          .socketOptions(socket)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enablePeriodicRefresh(Duration.ofSeconds(5))
              .enableAllAdaptiveRefreshTriggers()
              .adaptiveRefreshTriggersTimeout(Duration.ofMillis(200))
              .build())
          .build());
      this.client = cluster;
      this.probe = RedisClient.create(resources);
      probe.setOptions(ClientOptions.builder().autoReconnect(false).socketOptions(socket)
          .build());
    } else {
      ClientOptions options = ClientOptions.builder()
          .autoReconnect(true)
          .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
          .requestQueueSize(queue)
          .timeoutOptions(timeouts)
          .socketOptions(socket)
          .build();
      RedisClient standalone = RedisClient.create(resources);
      standalone.setOptions(options);
      this.client = standalone;
      this.probe = null;
      for (EventLoop loop : loops(b)) {
        LoopClient lc = new LoopClient(resources, loop);
        lc.setOptions(options);
        loopClients.add(lc);
      }
    }
    List<EventLoop> loops = new ArrayList<>();
    loopClients.forEach(lc -> loops.add(lc.loop()));
    this.lanes = new Lanes(loops);
    this.watch = new Watch(endpoint, resources, events, restored,
        loops.isEmpty() ? () -> true : lanes::allOpen, timer);
    this.thread = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "sluice-redis-connect");
      t.setDaemon(true);
      return t;
    });
    // close() drops the next attempt and lets a running one finish (see there)
    thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /** The loops of {@code b.eventLoops}, each once (standalone only). */
  private static List<EventLoop> loops(RedisStore.Builder b) {
    List<EventLoop> loops = new ArrayList<>();
    if (b.eventLoops == null) {
      return loops;
    }
    for (EventExecutor e : b.eventLoops) {
      if (!loops.contains(e)) {
        loops.add((EventLoop) e);
      }
    }
    return loops;
  }

  /** Starts connecting in the background; the warmer and callbacks must be usable by now. */
  void start() {
    thread.execute(() -> attempt(FIRST_RETRY_MILLIS));
  }

  /** Lettuce's computation pool: where timeouts complete calls. */
  java.util.concurrent.Executor executor() {
    return resources.eventExecutorGroup();
  }

  /**
   * True when Lettuce times calls out at the deadline (the store's own client); the
   * application's client has its own timeouts, so the store bounds each call on its timer.
   */
  boolean deadlineInClient() {
    return owned;
  }

  /** The timer behind Lettuce's command timeouts, shared by the store's other deadlines. */
  HashedWheelTimer timer() {
    return timer;
  }

  /** The store's connections; each has its connection once the store is ready. */
  Lanes lanes() {
    return lanes;
  }

  /**
   * Waits up to {@code wait} until ready.
   *
   * @throws StoreException at once when Redis refuses the credentials
   */
  void awaitReady(Duration wait) {
    try {
      started.get(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      LOG.log(System.Logger.Level.WARNING, "sluice-redis: {0} not ready after {1} ms; "
          + "decisions are degraded ({2}) until it answers", endpoint,
          String.valueOf(wait.toMillis()), degraded);
    } catch (ExecutionException e) {
      throw new StoreException("sluice-redis: authentication failed for " + endpoint + " ("
          + Failures.reason(e.getCause()) + ")", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException("sluice-redis: interrupted while waiting for " + endpoint, e);
    }
  }

  private void attempt(long retryMillis) {
    if (closed) {
      return;
    }
    List<Library.Conn> opened = new ArrayList<>(lanes.size());
    try {
      probeSeeds();
      Library.Conn shared = open(client);
      opened.add(shared);
      library.prepare(shared).get(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      for (LoopClient lc : loopClients) {
        opened.add(open(lc));
      }
      warmStart = System.nanoTime();
      warm(opened);
    } catch (Exception e) {
      opened.forEach(c -> c.raw().closeAsync());
      if (e instanceof InterruptedException || closed) {
        return;
      }
      failed(e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e);
      thread.schedule(() -> attempt(Math.min(retryMillis * 2, MAX_RETRY_MILLIS)), retryMillis,
          TimeUnit.MILLISECONDS);
      return;
    }
    if (closed) {
      opened.forEach(c -> c.raw().closeAsync());
      return;
    }
    lanes.publish(opened);
    started.complete(null);
    watch.start();
    LOG.log(System.Logger.Level.INFO, "sluice-redis: ready: {0} (connected{3}, scripts loaded, "
        + "warmed in {1} ms{2})", endpoint,
        String.valueOf(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - warmStart)),
        failing == null ? "" : "; after " + failedAttempts + " failed attempts in "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failingSince) + " ms",
        loopClients.isEmpty() ? "" : "; one connection on each of " + loopClients.size()
            + " event loops and one for other threads");
    events.emit(RedisStore.Event.READY, endpoint.toString());
  }

  /** Logs the first failure, and again only when the kind of failure changes. */
  private void failed(Throwable e) {
    boolean auth = Failures.authentication(e);
    String reason = Failures.reason(e);
    String kind = auth ? "auth" : "unreachable";
    if (failing == null) {
      failingSince = System.nanoTime();
    }
    failedAttempts++;
    if (!kind.equals(failing)) {
      if (auth) {
        LOG.log(System.Logger.Level.ERROR, "sluice-redis: authentication failed for {0} ({1}): "
            + "check the user and password in the URI; decisions are degraded ({2}) until "
            + "it is fixed", endpoint, reason, degraded);
      } else {
        LOG.log(System.Logger.Level.WARNING, "sluice-redis: cannot reach {0} yet ({1}); "
            + "decisions are degraded ({2}) until it answers; retrying in the background",
            endpoint, reason, degraded);
      }
    }
    failing = kind;
    if (auth) {
      started.completeExceptionally(e);
    }
    events.emit(auth ? RedisStore.Event.AUTH_FAILED : RedisStore.Event.CONNECT_FAILED, reason);
  }

  /** Cluster only: a quiet connection to each seed until one answers (see the class comment). */
  private void probeSeeds() {
    if (probe == null) {
      return;
    }
    RuntimeException first = null;
    for (RedisURI seed : endpoint.uris()) {
      try {
        probe.connect(StringCodec.UTF8, seed).close();
        return;
      } catch (RuntimeException e) {
        if (first == null || Failures.authentication(e)) {
          first = e;
        }
      }
    }
    throw first;
  }

  private Library.Conn open(AbstractRedisClient c) {
    if (c instanceof RedisClusterClient cluster) {
      var sc = cluster.connect(StringCodec.UTF8);
      return new Library.Conn(sc.async(), sc);
    }
    var sc = ((RedisClient) c).connect(StringCodec.UTF8, endpoint.uris().get(0));
    return new Library.Conn(sc.async(), sc);
  }

  /**
   * {@value #WARM_UP_CALLS} decisions' worth of client work, {@value #WARM_UP_IN_FLIGHT} at a
   * time, so the first real burst does not run cold code (see the class comment). Waves take
   * the lanes in turn, each at least one. Best effort: only an unusable connection fails it, a
   * timeout does not.
   */
  private void warm(List<Library.Conn> conns) throws InterruptedException, ExecutionException,
      TimeoutException {
    long until = System.nanoTime() + WARM_UP_NANOS;
    for (int done = 0, n = 0; !closed && (n < conns.size()
        || (done < WARM_UP_CALLS && System.nanoTime() - until < 0)); done += warmInFlight, n++) {
      int lane = n % conns.size();
      Library.Conn c = conns.get(lane);
      CompletableFuture<?>[] wave = new CompletableFuture<?>[warmInFlight];
      for (int i = 0; i < wave.length; i++) {
        wave[i] = warmer.apply(lane, c);
      }
      CompletableFuture.allOf(wave).handle((v, e) -> e == null || !Library.fatal(e)
          || Library.unwrap(e) instanceof RedisCommandTimeoutException ? null
          : Library.rethrow(e)).get(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Stops connecting, then closes the client. A running attempt is let finish first (it sees
   * {@code closed} and closes what it opened), since shutting the client down under a connect
   * makes Netty log errors; no store line is logged after this returns.
   */
  @Override
  public void close() {
    closed = true;
    thread.shutdown();
    try {
      if (!thread.awaitTermination(5, TimeUnit.SECONDS)) {
        thread.shutdownNow();
      }
    } catch (InterruptedException e) {
      thread.shutdownNow();
      Thread.currentThread().interrupt();
    }
    watch.close();
    lanes.forget();
    if (probe != null) {
      probe.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    for (LoopClient lc : loopClients) {
      lc.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    // The store's connection first, then (when owned) the client: a cluster connection closes
    // its node connections, which leave the client's list as they close. Left to
    // client.shutdown, each node connection was closed twice (by its cluster connection, then by
    // the client's list), and Lettuce warned "Connection is already closed" for each.
    Library.Conn c = lanes.get(0).conn();
    if (c != null) {
      c.raw().close();
    }
    if (owned) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
    timer.stop();
  }
}
