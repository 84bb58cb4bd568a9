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
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.util.HashedWheelTimer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

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
  private final Function<Library.Conn, CompletableFuture<?>> warmer;
  private final Library library;
  private final Events events;
  private final String degraded;
  private final ClientResources resources;
  private final AbstractRedisClient client;
  /** False for the application's client: left open on close, its timeouts not the deadline. */
  private final boolean owned;
  private final RedisClient probe;
  private final ScheduledThreadPoolExecutor thread;
  private final HashedWheelTimer timer;
  private final int warmInFlight;
  private final CompletableFuture<Void> started = new CompletableFuture<>();
  private volatile Library.Conn conn;
  private final Watch watch;
  private volatile boolean closed;
  private String failing;
  private int failedAttempts;
  private long failingSince;
  private long warmStart;

  Connector(RedisStore.Builder b, Library library, Events events,
      Function<Library.Conn, CompletableFuture<?>> warmer, Runnable restored) {
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
        .timeoutSource(new Deadline(b.deadlineNanos)).build();
    for (RedisURI uri : endpoint.uris()) {
      uri.setTimeout(HANDSHAKE_TIMEOUT);
    }
    if (!owned) {
      this.client = b.client;
      this.probe = null;
    } else if (endpoint.cluster()) {
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
      RedisClient standalone = RedisClient.create(resources);
      standalone.setOptions(ClientOptions.builder()
          .autoReconnect(true)
          .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
          .requestQueueSize(queue)
          .timeoutOptions(timeouts)
          .socketOptions(socket)
          .build());
      this.client = standalone;
      this.probe = null;
    }
    this.watch = new Watch(endpoint, resources, events, restored);
    this.thread = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "sluice-redis-connect");
      t.setDaemon(true);
      return t;
    });
    // close() drops the next attempt and lets a running one finish (see there)
    thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
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

  /** The connection once ready, else null. */
  Library.Conn conn() {
    return conn;
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
    Library.Conn c = null;
    try {
      probeSeeds();
      c = open();
      library.prepare(c).get(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      warmStart = System.nanoTime();
      warm(c);
    } catch (Exception e) {
      if (c != null) {
        c.raw().closeAsync();
      }
      if (e instanceof InterruptedException || closed) {
        return;
      }
      failed(e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e);
      thread.schedule(() -> attempt(Math.min(retryMillis * 2, MAX_RETRY_MILLIS)), retryMillis,
          TimeUnit.MILLISECONDS);
      return;
    }
    if (closed) {
      c.raw().closeAsync();
      return;
    }
    conn = c;
    started.complete(null);
    watch.start();
    LOG.log(System.Logger.Level.INFO, "sluice-redis: ready: {0} (connected, scripts loaded, "
        + "warmed in {1} ms{2})", endpoint,
        String.valueOf(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - warmStart)),
        failing == null ? "" : "; after " + failedAttempts + " failed attempts in "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failingSince) + " ms");
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

  private Library.Conn open() {
    if (client instanceof RedisClusterClient cluster) {
      var sc = cluster.connect(StringCodec.UTF8);
      return new Library.Conn(sc.async(), sc);
    }
    var sc = ((RedisClient) client).connect(StringCodec.UTF8, endpoint.uris().get(0));
    return new Library.Conn(sc.async(), sc);
  }

  /**
   * {@value #WARM_UP_CALLS} decisions' worth of client work, {@value #WARM_UP_IN_FLIGHT} at a
   * time, so the first real burst does not run cold code (see the class comment). Best effort:
   * only an unusable connection fails it, a timeout does not.
   */
  private void warm(Library.Conn c) throws InterruptedException, ExecutionException,
      TimeoutException {
    long until = System.nanoTime() + WARM_UP_NANOS;
    for (int done = 0; done < WARM_UP_CALLS && !closed && System.nanoTime() - until < 0;
        done += warmInFlight) {
      CompletableFuture<?>[] wave = new CompletableFuture<?>[warmInFlight];
      for (int i = 0; i < wave.length; i++) {
        wave[i] = warmer.apply(c);
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
    if (probe != null) {
      probe.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    if (owned) {
      // The store's connection first: a cluster connection closes its node connections, which
      // leave the client's list as they close. Left to client.shutdown, each node connection was
      // closed twice (by its cluster connection, then by the client's list), and Lettuce warned
      // "Connection is already closed" for each.
      Library.Conn c = conn;
      if (c != null) {
        c.raw().close();
      }
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      resources.shutdown(0, 2, TimeUnit.SECONDS);
    } else {
      Library.Conn c = conn;
      if (c != null) {
        c.raw().close();
      }
    }
    timer.stop();
  }

  /**
   * Lettuce's command timeout: the deadline for the data path (the scripts, DBSIZE), the
   * handshake timeout for everything else: FUNCTION and SCRIPT LOAD compile the library, and the
   * commands Lettuce sends while connecting (CLIENT SETINFO, PING, ...) may take longer than a
   * decision on a busy server. Since the store's timer fires a deadline within a tenth of it
   * (Lettuce's ticked every 100 ms), a 50 ms deadline on those failed connects under load.
   */
  private static final class Deadline extends TimeoutOptions.TimeoutSource {
    private final long deadlineNanos;

    Deadline(long deadlineNanos) {
      this.deadlineNanos = deadlineNanos;
    }

    @Override
    public long getTimeout(RedisCommand<?, ?, ?> command) {
      var type = command.getType();
      return type == CommandType.FCALL || type == CommandType.EVALSHA
          || type == CommandType.EVAL || type == CommandType.DBSIZE
          ? deadlineNanos : HANDSHAKE_TIMEOUT.toNanos();
    }

    @Override
    public TimeUnit getTimeUnit() {
      return TimeUnit.NANOSECONDS;
    }
  }
}
