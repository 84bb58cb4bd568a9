package dev.sluice.server.migrate;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Generated traffic for nginx: clients named by their X-Forwarded-For address (nginx's realip
 * trusts the test's loopback peer), each sending HTTP/1.1 requests on keep-alive connections of
 * its own, one request per connection at a time: a request goes on an idle connection of its
 * client, or a new one. Shapes: people at human rates, bursts, a crowd behind one address, a
 * flood keeping requests in flight back to back. Plans are drawn from a seeded Random; when the
 * requests actually leave is up to the machine, and nginx's log records what happened.
 */
final class Traffic implements AutoCloseable {

  private final int port;
  private final long start = System.nanoTime();
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "traffic");
    t.setDaemon(true);
    return t;
  });
  private final java.util.concurrent.ScheduledExecutorService timer =
      Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "traffic-timer");
        t.setDaemon(true);
        return t;
      });
  private final java.util.Map<String, ArrayDeque<Socket>> idle = new java.util.HashMap<>();
  final AtomicInteger sent = new AtomicInteger();
  final AtomicInteger failed = new AtomicInteger();
  private final AtomicInteger inFlight = new AtomicInteger();
  final AtomicLong lastError = new AtomicLong();

  Traffic(int port) {
    this.port = port;
  }

  /** One request from {@code client} for {@code target}, at {@code atMillis} after the start. */
  void at(long atMillis, String client, String target) {
    inFlight.incrementAndGet();
    timer.schedule(() -> pool.execute(() -> send(client, target)),
        Math.max(0, atMillis - elapsedMillis()), TimeUnit.MILLISECONDS);
  }

  long elapsedMillis() {
    return (System.nanoTime() - start) / 1_000_000;
  }

  /** A person: requests with exponential gaps of mean {@code meanGapMs} from {@code fromMs}. */
  void person(Random rnd, String client, String target, long fromMs, long toMs,
      double meanGapMs) {
    double t = fromMs + rnd.nextDouble() * meanGapMs;
    while (t < toMs) {
      at((long) t, client, target);
      t += -Math.log(1 - rnd.nextDouble()) * meanGapMs;
    }
  }

  /** {@code n} requests at once (each on a connection of its own when none is idle). */
  void burst(long atMs, String client, String target, int n) {
    for (int i = 0; i < n; i++) {
      at(atMs, client, target);
    }
  }

  /** {@code parallel} requests in flight back to back from {@code fromMs} to {@code toMs}. */
  void flood(String client, String target, long fromMs, long toMs, int parallel) {
    for (int i = 0; i < parallel; i++) {
      inFlight.incrementAndGet();
      timer.schedule(() -> pool.execute(() -> {
        try {
          while (elapsedMillis() < toMs) {
            inFlight.incrementAndGet();
            send(client, target);
          }
        } finally {
          inFlight.decrementAndGet();
        }
      }), Math.max(0, fromMs - elapsedMillis()), TimeUnit.MILLISECONDS);
    }
  }

  /** Waits until every planned request has been answered (or failed). */
  void await(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000;
    while (inFlight.get() > 0) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(inFlight.get() + " requests still in flight");
      }
      Thread.sleep(20);
    }
  }

  private void send(String client, String target) {
    Socket s = null;
    try {
      s = take(client);
      OutputStream out = s.getOutputStream();
      out.write(("GET " + target + " HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: " + client
          + "\r\nUser-Agent: traffic\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      if (readResponse(s.getInputStream())) {
        give(client, s);
        s = null;
      }
      sent.incrementAndGet();
    } catch (IOException e) {
      failed.incrementAndGet();
      lastError.set(System.nanoTime());
    } finally {
      if (s != null) {
        try {
          s.close();
        } catch (IOException ignored) {
          // closing
        }
      }
      inFlight.decrementAndGet();
    }
  }

  private Socket take(String client) throws IOException {
    synchronized (idle) {
      ArrayDeque<Socket> q = idle.get(client);
      if (q != null && !q.isEmpty()) {
        return q.pop();
      }
    }
    Socket s = new Socket();
    s.setTcpNoDelay(true);
    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    s.setSoTimeout(60_000);
    return s;
  }

  private void give(String client, Socket s) {
    synchronized (idle) {
      idle.computeIfAbsent(client, c -> new ArrayDeque<>()).push(s);
    }
  }

  /** Reads one response; true when the connection may carry another. */
  private static boolean readResponse(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    int c;
    int state = 0;
    while (state < 4 && (c = in.read()) >= 0) {
      head.append((char) c);
      state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1
          || state == 3)) ? state + 1 : 0;
    }
    if (state < 4) {
      throw new IOException("connection closed before a whole response head");
    }
    String h = head.toString().toLowerCase(java.util.Locale.ROOT);
    int cl = h.indexOf("content-length:");
    if (cl < 0) {
      throw new IOException("no content-length: " + h);
    }
    int end = h.indexOf('\r', cl);
    long len = Long.parseLong(h.substring(cl + 15, end).trim());
    while (len > 0) {
      long k = in.skip(len);
      if (k <= 0) {
        if (in.read() < 0) {
          throw new IOException("body cut short");
        }
        k = 1;
      }
      len -= k;
    }
    return !h.contains("connection: close");
  }

  @Override
  public void close() {
    timer.shutdownNow();
    pool.shutdownNow();
    synchronized (idle) {
      for (ArrayDeque<Socket> q : idle.values()) {
        for (Socket s : q) {
          try {
            s.close();
          } catch (IOException ignored) {
            // closing
          }
        }
      }
    }
  }

  static List<String> addresses(String prefix, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(prefix + (i / 250) + "." + (1 + i % 250));
    }
    return out;
  }
}
