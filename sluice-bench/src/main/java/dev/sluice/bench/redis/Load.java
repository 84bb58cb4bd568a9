package dev.sluice.bench.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * How a {@link Subject} is driven: {@code threads} threads each making blocking calls, or, with
 * {@code inFlight > 0}, {@code threads} threads keeping {@code inFlight} asynchronous calls
 * outstanding between them (a call is issued as soon as one completes). Keys are picked
 * uniformly at random. Latency is from the call to its answer.
 */
final class Load {

  final int threads;
  final int inFlight;

  Load(int threads, int inFlight) {
    this.threads = threads;
    this.inFlight = inFlight;
  }

  String describe() {
    return inFlight > 0 ? inFlight + " asynchronous calls in flight from " + threads
        + " thread(s)" : threads + " threads making blocking calls";
  }

  void run(Subject s, int seconds, int keys, Result into) throws InterruptedException {
    if (inFlight > 0) {
      async(s, seconds, keys, into);
    } else {
      blocking(s, seconds, keys, into);
    }
  }

  private void blocking(Subject s, int seconds, int keys, Result into)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(threads);
    Histogram[] hs = new Histogram[threads];
    long t0 = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      Histogram h = new Histogram();
      hs[t] = h;
      Thread th = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long allowed = 0;
        while (!stop.get()) {
          int k = keys == 1 ? 0 : rnd.nextInt(keys);
          long start = System.nanoTime();
          boolean ok = s.decide(k);
          h.record(System.nanoTime() - start);
          allowed += ok ? 1 : 0;
        }
        into.allowed.add(allowed);
        done.countDown();
      });
      th.setDaemon(true);
      th.start();
    }
    Thread.sleep(seconds * 1000L);
    stop.set(true);
    done.await();
    into.nanos += System.nanoTime() - t0;
    for (Histogram h : hs) {
      into.hist.add(h);
    }
  }

  /**
   * Answers arrive on the library's I/O thread, so latencies are recorded under a lock on one
   * histogram per issuing thread (uncontended in practice: one I/O thread per connection).
   */
  private void async(Subject s, int seconds, int keys, Result into) throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    Semaphore window = new Semaphore(inFlight);
    CountDownLatch done = new CountDownLatch(threads);
    Histogram[] hs = new Histogram[threads];
    LongAdder allowed = new LongAdder();
    long t0 = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      Histogram h = new Histogram();
      hs[t] = h;
      Thread th = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        try {
          while (!stop.get()) {
            window.acquire();
            int k = keys == 1 ? 0 : rnd.nextInt(keys);
            long start = System.nanoTime();
            CompletableFuture<Boolean> f;
            try {
              f = s.decideAsync(k);
            } catch (RuntimeException e) {
              f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((ok, e) -> {
              long took = System.nanoTime() - start;
              synchronized (h) {
                h.record(took);
              }
              if (ok != null && ok) {
                allowed.increment();
              }
              window.release();
            });
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        done.countDown();
      });
      th.setDaemon(true);
      th.start();
    }
    Thread.sleep(seconds * 1000L);
    stop.set(true);
    done.await();
    // every call answered
    if (!window.tryAcquire(inFlight, 30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("calls still outstanding 30 s after the run");
    }
    into.nanos += System.nanoTime() - t0;
    into.allowed.add(allowed.sum());
    for (Histogram h : hs) {
      synchronized (h) {
        into.hist.add(h);
      }
    }
  }

  /** Touches every key once, then runs a few seconds of load for the JIT. */
  void warm(Subject s, int keys) throws InterruptedException {
    List<Thread> ts = new ArrayList<>();
    int n = Math.max(threads, 4);
    for (int t = 0; t < n; t++) {
      int first = t;
      Thread th = new Thread(() -> {
        for (int k = first; k < keys; k += n) {
          s.decide(k);
        }
      });
      th.start();
      ts.add(th);
    }
    for (Thread t : ts) {
      t.join();
    }
    run(s, 3, keys, new Result("warm-up"));
  }

  /** Totals over one or more runs. */
  static final class Result {
    static final String HEADER = String.format(Locale.ROOT, "%-34s %12s %9s %9s %10s %10s %12s "
        + "%12s %12s %9s", "library", "decisions/s", "p50 us", "p99 us", "sent/dec", "exec/dec",
        "cmd us/dec", "cpu us/dec", "client us/dec", "degraded");

    final String name;
    final Histogram hist = new Histogram();
    final LongAdder allowed = new LongAdder();
    long nanos;
    long sentCalls;
    long executedCalls;
    double commandMicros;
    double cpuSeconds;
    double clientCpuSeconds;
    long degraded;

    Result(String name) {
      this.name = name;
    }

    long decisions() {
      return hist.count();
    }

    double rate() {
      return decisions() / (nanos / 1e9);
    }

    double cpuMicros() {
      return cpuSeconds * 1e6 / Math.max(1, decisions());
    }

    double commandMicrosPerDecision() {
      return commandMicros / Math.max(1, decisions());
    }

    void add(Result r) {
      hist.add(r.hist);
      allowed.add(r.allowed.sum());
      nanos += r.nanos;
      sentCalls += r.sentCalls;
      executedCalls += r.executedCalls;
      commandMicros += r.commandMicros;
      cpuSeconds += r.cpuSeconds;
      clientCpuSeconds += r.clientCpuSeconds;
      degraded += r.degraded;
    }

    String row() {
      double n = Math.max(1, decisions());
      return String.format(Locale.ROOT, "%-34s %,12.0f %9.1f %9.1f %10.4f %10.4f %12.3f %12.3f "
          + "%12.3f %9d", name, rate(), hist.quantile(0.5) / 1e3, hist.quantile(0.99) / 1e3,
          sentCalls / n, executedCalls / n, commandMicros / n, cpuMicros(),
          clientCpuSeconds * 1e6 / n, degraded);
    }
  }
}
