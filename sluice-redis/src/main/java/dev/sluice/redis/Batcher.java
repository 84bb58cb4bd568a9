package dev.sluice.redis;

import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Coalesces concurrent token-bucket decisions on one connection into one call of
 * {@code buckets} (bucket.lua), standalone servers only (a cluster call needs one slot).
 *
 * <p>Why: most of a one-decision FCALL's Redis CPU is the call itself, not the decision (on a
 * 2-vCPU VM 10-15 us per call, about 5 us per decision in calls of 64; docs/bench/redis.md),
 * and each call is also a command for the client to encode, write, read and decode.
 *
 * <p>How, without waiting for a batch to fill (Nagle's algorithm, counted in calls): while
 * fewer than {@code out} calls ({@value #CALLS} by default) are in flight a decision goes at once
 * (alone, as a plain
 * {@code bucket} call, when nothing else is queued); decisions that arrive while they are out
 * queue up and leave together as soon as one returns, or as soon as {@value #MAX_BATCH} are
 * queued, so a slow Redis does not cap the rate at two batches per round trip. An idle store
 * thus adds no latency; a busy one sends fewer, larger calls. Decisions run in arrival order,
 * each the same transition as alone.
 *
 * <p>Deadlines: a batch is bounded by its oldest decision's deadline, and a queued decision
 * waits only for batches made of older ones, so no decision waits past its own deadline; a
 * decision whose deadline passed in the queue fails without being sent.
 */
final class Batcher {

  static final int MAX_BATCH = 128;
  static final int CALLS = 2;
  private static final String[] SMALL = new String[MAX_BATCH + 1];

  static {
    for (int i = 0; i < SMALL.length; i++) {
      SMALL[i] = Integer.toString(i);
    }
  }

  /** One decision waiting for its batch; bucket.lua's reply for it goes to {@link #replied}. */
  abstract static class Pending {
    final String key;
    final RuleCodec.Bucket bucket;
    final long cost;
    private long deadline;

    Pending(String key, RuleCodec.Bucket bucket, long cost) {
      this.key = key;
      this.bucket = bucket;
      this.cost = cost;
    }

    /** The reply, or why there is none ({@code failure} non-null); called once. */
    abstract void replied(long reply, Throwable failure);
  }

  /** A decision whose reply is a stage. */
  private static final class Staged extends Pending {
    final CompletableFuture<Long> result = new CompletableFuture<>();

    Staged(String key, RuleCodec.Bucket bucket, long cost) {
      super(key, bucket, cost);
    }

    @Override
    void replied(long reply, Throwable failure) {
      if (failure != null) {
        result.completeExceptionally(failure);
      } else {
        result.complete(reply);
      }
    }
  }

  private final Calls calls;
  private final Supplier<String> clock;
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicInteger sending = new AtomicInteger();
  private final int out;

  /** {@code out}: calls this batcher keeps in flight at most (unless a batch is full). */
  Batcher(Calls calls, Supplier<String> clock, int out) {
    this.calls = calls;
    this.clock = clock;
    this.out = out;
  }

  /** bucket.lua's reply for one decision on the laid-out key {@code key}. */
  CompletableFuture<Long> submit(Library.Conn c, String key, RuleCodec.Bucket b, long cost) {
    Staged p = new Staged(key, b, cost);
    submit(c, p);
    return p.result;
  }

  /** Queues {@code p}, whose deadline starts now, to go out on {@code c}. */
  void submit(Library.Conn c, Pending p) {
    p.deadline = calls.now() + calls.deadlineNanos();
    queue.offer(p);
    queued.incrementAndGet();
    drain(c);
  }

  /**
   * Sends what is queued while a call is free or a batch is full. A submitter that finds the
   * calls out leaves its decision queued; the completing call drains after it frees its slot:
   * count-then-check against free-then-check, so nothing is left behind.
   */
  private void drain(Library.Conn c) {
    while (true) {
      int waiting = queued.get();
      int n = sending.get();
      if (waiting == 0 || (n >= out && waiting < MAX_BATCH)) {
        return;
      }
      if (!sending.compareAndSet(n, n + 1)) {
        continue;
      }
      List<Pending> batch = take();
      if (batch.isEmpty()) {
        sending.decrementAndGet();
      } else {
        send(c, batch);
      }
    }
  }

  private List<Pending> take() {
    List<Pending> batch = new ArrayList<>(Math.min(MAX_BATCH, 16));
    long now = calls.now();
    Pending p;
    while (batch.size() < MAX_BATCH && (p = queue.poll()) != null) {
      queued.decrementAndGet();
      if (p.deadline - now <= 0) {
        p.replied(0, calls.timeout());
      } else {
        batch.add(p);
      }
    }
    return batch;
  }

  private void send(Library.Conn c, List<Pending> batch) {
    CompletableFuture<?> call;
    try {
      call = batch.size() == 1 ? one(c, batch.get(0)) : many(c, batch);
      call = calls.within(call, batch.get(0).deadline);
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    call.whenComplete((r, e) -> {
      // The next call first, so Redis works on it while this thread runs the continuations
      // (measured: 2.2-2.7x Bucket4j at 64 in flight, from 2.1-2.4x answering first).
      try {
        sending.decrementAndGet();
        drain(c);
      } finally {
        Throwable failure = e == null ? null : Library.unwrap(e);
        for (int i = 0; i < batch.size(); i++) {
          Pending p = batch.get(i);
          if (failure != null) {
            p.replied(0, failure);
          } else if (r instanceof List<?> replies) {
            p.replied((Long) replies.get(i), null);
          } else {
            p.replied((Long) r, null);
          }
        }
      }
    });
  }

  private CompletableFuture<Long> one(Library.Conn c, Pending p) {
    RuleCodec.Bucket b = p.bucket;
    String[] k = {p.key};
    String[] a = {clock.get(), small(p.cost), b.prefix(), b.cap(), b.interval()};
    return calls.run(c, Scripts.BUCKET, ScriptOutputType.INTEGER, k, a);
  }

  /**
   * ARGV: clock, shape count, the shapes, whether a key repeats, then one cost when every
   * decision has the first shape and that cost, else (shape, cost) per decision; see
   * bucket.lua, which skips work for the uniform and the no-repeat cases.
   */
  private CompletableFuture<List<Object>> many(Library.Conn c, List<Pending> batch) {
    int n = batch.size();
    String[] keys = new String[n];
    Set<String> distinct = new HashSet<>(2 * n);
    boolean repeats = false;
    List<RuleCodec.Bucket> shapes = new ArrayList<>(2);
    int[] shape = new int[n];
    boolean uniform = true;
    for (int i = 0; i < n; i++) {
      Pending p = batch.get(i);
      keys[i] = p.key;
      repeats |= !distinct.add(p.key);
      shape[i] = shapes.indexOf(p.bucket);
      if (shape[i] < 0) {
        shape[i] = shapes.size();
        shapes.add(p.bucket);
      }
      uniform &= shape[i] == 0 && p.cost == batch.get(0).cost;
    }
    int head = 3 + 3 * shapes.size();
    String[] args = new String[uniform ? head + 1 : head + 2 * n];
    args[0] = clock.get();
    args[1] = small(shapes.size());
    for (int s = 0; s < shapes.size(); s++) {
      RuleCodec.Bucket b = shapes.get(s);
      args[2 + 3 * s] = b.prefix();
      args[3 + 3 * s] = b.cap();
      args[4 + 3 * s] = b.interval();
    }
    args[head - 1] = repeats ? "1" : "0";
    if (uniform) {
      args[head] = small(batch.get(0).cost);
    } else {
      for (int i = 0; i < n; i++) {
        args[head + 2 * i] = small(shape[i] + 1);
        args[head + 2 * i + 1] = small(batch.get(i).cost);
      }
    }
    return calls.run(c, Scripts.BUCKETS, ScriptOutputType.MULTI, keys, args);
  }

  private static String small(long n) {
    return n >= 0 && n < SMALL.length ? SMALL[(int) n] : Long.toString(n);
  }
}
