package dev.sluice.redis;

import dev.sluice.core.Ticker;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs the Lua entry points (see {@link Scripts}): {@code FCALL} once the Redis 7 function
 * library is loaded on the server (every master of a cluster); until then, after a
 * {@code FUNCTION FLUSH}, and forever on a server without {@code FUNCTION}, {@code EVALSHA}, with
 * {@code EVAL} (which also caches the script) when the script is missing.
 */
final class Library {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
  private static final int MISSING = 0;
  private static final int READY = 1;
  private static final int UNSUPPORTED = 2;
  private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final Scripts.Script[] SCRIPTS = {Scripts.EVALUATE, Scripts.REFUND,
      Scripts.BUCKET, Scripts.BUCKETS, Scripts.COOLDOWN, Scripts.LEASES, Scripts.PEEK,
      Scripts.UNBAN, Scripts.NOTE};

  /** One connection and its commands (the cluster's route by key). */
  record Conn(RedisClusterAsyncCommands<String, String> cmd,
      StatefulConnection<String, String> raw) {}

  private final boolean useFunctions;
  private final Ticker ticker;
  private final Object endpoint;
  private volatile int state = MISSING;
  private final AtomicBoolean loading = new AtomicBoolean();
  private volatile long nextLoad;

  Library(boolean useFunctions, Ticker ticker, Object endpoint) {
    this.useFunctions = useFunctions;
    this.ticker = ticker;
    this.endpoint = endpoint;
    this.nextLoad = ticker.read();
  }

  /** Bounds a call's second command by what is left of its deadline (ticker time). */
  interface Budget {
    <T> CompletableFuture<T> within(CompletableFuture<T> next, long deadline);
  }

  /**
   * Runs one entry point: FCALL when the library is loaded, else EVALSHA. A missing library
   * (FUNCTION FLUSH, a restart without persistence, a new cluster node) or a missing script
   * (SCRIPT FLUSH) costs that call one more round trip, within its {@code deadline}, and is
   * reloaded; callers never see it.
   */
  <T> CompletableFuture<T> run(Conn c, Scripts.Script s, ScriptOutputType type, String[] keys,
      String[] args, Budget budget, long deadline) {
    if (state != READY) {
      if (state == MISSING && useFunctions && ticker.read() - nextLoad >= 0) {
        load(c);
      }
      return evalsha(c, s, type, keys, args, budget, deadline);
    }
    CompletableFuture<T> first = c.cmd().<T>fcall(s.function(), type, keys, args)
        .toCompletableFuture();
    return first.exceptionallyCompose(e -> {
      Throwable cause = unwrap(e);
      if (cause.getMessage() != null && cause.getMessage().contains("Function not found")) {
        state = MISSING;
        load(c);
        return budget.within(evalsha(c, s, type, keys, args, budget, deadline), deadline);
      }
      return CompletableFuture.failedFuture(cause);
    });
  }

  /** EVALSHA, falling back to EVAL (which also reloads the script) on NOSCRIPT. */
  private static <T> CompletableFuture<T> evalsha(Conn c, Scripts.Script s,
      ScriptOutputType type, String[] keys, String[] args, Budget budget, long deadline) {
    CompletableFuture<T> first = c.cmd().<T>evalsha(s.sha(), type, keys, args)
        .toCompletableFuture();
    return first.exceptionallyCompose(e -> {
      Throwable cause = unwrap(e);
      if (cause instanceof RedisNoScriptException
          || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"))) {
        return budget.within(c.cmd().<T>eval(s.body(), type, keys, args).toCompletableFuture(),
            deadline);
      }
      return CompletableFuture.failedFuture(cause);
    });
  }

  static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  /**
   * Before serving: the function library, or where there is none (Redis 6, functions off) every
   * script with SCRIPT LOAD, on every master, so no first call pays for a load. Completes
   * exceptionally only when the connection is unusable (NOAUTH, lost, no answer): the caller
   * retries; a server that will not load code (an ACL, an old version) leaves calls on EVALSHA
   * and EVAL.
   */
  CompletableFuture<Void> prepare(Conn c) {
    return load(c).thenCompose(loaded -> {
      if (state == READY) {
        return CompletableFuture.completedFuture(null);
      }
      List<CompletableFuture<Boolean>> loads = new ArrayList<>();
      for (Scripts.Script s : SCRIPTS) {
        for (CompletableFuture<String> f : onEveryMaster(c, false, s.body())) {
          loads.add(f.handle((ok, e) -> e == null || !fatal(e) ? true : rethrow(e)));
        }
      }
      return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new));
    });
  }

  /**
   * FUNCTION LOAD of the library (on every master of a cluster), one load at a time and at most
   * one attempt per second. "Already exists" is success: the name is a digest of the code. A
   * server that will not load it (no FUNCTION before Redis 7, an ACL) is never asked again.
   * Completes exceptionally only when the connection is unusable (see {@link #fatal}).
   */
  private CompletableFuture<Void> load(Conn c) {
    if (!useFunctions || state == UNSUPPORTED || !loading.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(null);
    }
    nextLoad = ticker.read() + RETRY_NANOS;
    List<CompletableFuture<String>> loads;
    try {
      loads = onEveryMaster(c, true, Scripts.LIBRARY);
    } catch (RuntimeException e) {
      loading.set(false);
      return CompletableFuture.failedFuture(e);
    }
    List<CompletableFuture<Boolean>> loaded = new ArrayList<>(loads.size());
    for (CompletableFuture<String> f : loads) {
      loaded.add(f.handle((ok, e) -> {
        if (e == null || String.valueOf(unwrap(e).getMessage()).contains("already exists")) {
          return true;
        }
        if (fatal(e)) {
          return rethrow(e);
        }
        state = UNSUPPORTED;
        LOG.log(System.Logger.Level.INFO, "sluice-redis: {0} does not load the function "
            + "library ({1}); using EVALSHA", endpoint, unwrap(e).getMessage());
        return false;
      }));
    }
    return CompletableFuture.allOf(loaded.toArray(CompletableFuture[]::new))
        .whenComplete((v, e) -> {
          if (e == null && loaded.stream().allMatch(CompletableFuture::join)) {
            state = READY;
          }
          loading.set(false);
        });
  }

  /**
   * True when an error says the connection cannot serve at all (not an answer from Redis, or
   * an answer that refuses every command: NOAUTH, WRONGPASS, LOADING, CLUSTERDOWN), rather than
   * that this server will not load code.
   */
  static boolean fatal(Throwable e) {
    Throwable cause = unwrap(e);
    if (!(cause instanceof RedisCommandExecutionException)) {
      return true;
    }
    String m = String.valueOf(cause.getMessage());
    return Failures.authentication(cause) || m.startsWith("LOADING")
        || m.startsWith("CLUSTERDOWN") || m.startsWith("MASTERDOWN")
        || m.startsWith("TRYAGAIN");
  }

  /** Throws {@code e} on in a completion stage; declared to return for use in handlers. */
  static <T> T rethrow(Throwable e) {
    throw new CompletionException(unwrap(e));
  }

  /** One command on every master of a cluster, or on the one server. */
  private static List<CompletableFuture<String>> onEveryMaster(Conn c, boolean function,
      String text) {
    if (c.raw() instanceof StatefulRedisClusterConnection<String, String> sc) {
      var masters = sc.async().upstream().commands();
      return Arrays.asList((function ? masters.functionLoad(text) : masters.scriptLoad(text))
          .futures());
    }
    return List.of((function ? c.cmd().functionLoad(text) : c.cmd().scriptLoad(text))
        .toCompletableFuture());
  }
}
