package dev.sluice.server.admin;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The console's server-sent event streams: at most {@value #MAX} open at once (one per open
 * console page), each sent the latest event only.
 *
 * <p>Why a thread per stream. The admin listener is the JDK's {@code HttpServer}, whose response
 * bodies are blocking writes to a blocking socket channel: a writer that a slow or stalled
 * client holds up can do nothing else meanwhile. One writer for every stream would let one
 * stalled page freeze every other; a thread per stream keeps each stall to itself. The threads
 * are bounded by {@value #MAX} (a stream past that is a 503 before any thread starts), each has
 * a small stack, and memory per stream is one event: a stream that falls behind skips to the
 * newest event rather than queueing. A write that has not finished after {@value
 * #WRITE_TIMEOUT_SECONDS} s is ended by interrupting its thread: the channel is an
 * interruptible NIO channel, so the interrupt closes the connection and frees the slot. A client
 * that goes away is noticed by the next write, at most a second or two later.
 */
final class EventStreams implements AutoCloseable {

  static final int MAX = 16;
  static final long WRITE_TIMEOUT_SECONDS = 10;
  private static final long STACK_BYTES = 256 * 1024;
  /** Sent first: the browser's reconnect delay and a comment that flushes the headers. */
  private static final byte[] HELLO = "retry: 2000\n: sluice console\n\n"
      .getBytes(StandardCharsets.UTF_8);

  private final int max;
  private final long writeTimeoutNanos;
  private final Set<Stream> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger count = new AtomicInteger();
  private final AtomicLong ids = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private volatile boolean closed;

  /** At most {@value #MAX} streams, a write ended after {@value #WRITE_TIMEOUT_SECONDS} s. */
  EventStreams() {
    this(MAX, java.time.Duration.ofSeconds(WRITE_TIMEOUT_SECONDS));
  }

  EventStreams(int max, java.time.Duration writeTimeout) {
    this.max = max;
    this.writeTimeoutNanos = writeTimeout.toNanos();
  }

  /**
   * Starts streaming to {@code exchange}, which the stream then owns and closes; false, with
   * nothing sent, when {@value #MAX} streams are open (the caller answers 503).
   */
  boolean open(HttpExchange exchange, byte[] first) throws IOException {
    if (closed || count.incrementAndGet() > max) {
      count.decrementAndGet();
      refused.incrementAndGet();
      return false;
    }
    Stream s;
    try {
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      exchange.getResponseHeaders().set("X-Accel-Buffering", "no");
      exchange.sendResponseHeaders(200, 0);
      s = new Stream(exchange);
      open.add(s);
    } catch (IOException | RuntimeException e) {
      count.decrementAndGet();
      throw e;
    }
    if (first != null) {
      s.offer(first);
    }
    s.thread.start();
    return true;
  }

  /** Hands {@code event} (one or more complete SSE events) to every open stream. */
  void publish(byte[] event) {
    for (Stream s : open) {
      s.offer(event);
    }
  }

  /** Streams open now. */
  int count() {
    return count.get();
  }

  /** Streams refused because {@value #MAX} were open, since start. */
  long refused() {
    return refused.get();
  }

  /** Ends every stream whose write has taken longer than {@value #WRITE_TIMEOUT_SECONDS} s. */
  void expireStalled(long nanoNow) {
    for (Stream s : open) {
      long since = s.writingSince;
      if (since != 0 && nanoNow - since > writeTimeoutNanos) {
        s.thread.interrupt();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    for (Stream s : open) {
      s.stop();
    }
  }

  /** One open stream: its exchange, its thread and the next event to write. */
  private final class Stream implements Runnable {
    final HttpExchange exchange;
    final Thread thread;
    /** When the current write started (System.nanoTime, never 0), or 0 between writes. */
    volatile long writingSince;
    private byte[] next;
    private boolean stopped;

    Stream(HttpExchange exchange) {
      this.exchange = exchange;
      this.thread = new Thread(null, this, "sluice-console-stream-" + ids.incrementAndGet(),
          STACK_BYTES);
      thread.setDaemon(true);
    }

    synchronized void offer(byte[] event) {
      next = event;
      notifyAll();
    }

    synchronized void stop() {
      stopped = true;
      notifyAll();
      thread.interrupt();
    }

    private synchronized byte[] take() throws InterruptedException {
      while (next == null && !stopped) {
        wait();
      }
      byte[] e = next;
      next = null;
      return stopped ? null : e;
    }

    @Override
    public void run() {
      try {
        OutputStream out = exchange.getResponseBody();
        write(out, HELLO);
        for (byte[] e = take(); e != null; e = take()) {
          write(out, e);
        }
      } catch (IOException | InterruptedException e) {
        // the page went away, the write stalled past its timeout, or the server is stopping
      } finally {
        open.remove(this);
        count.decrementAndGet();
        exchange.close();
      }
    }

    private void write(OutputStream out, byte[] bytes) throws IOException {
      writingSince = System.nanoTime() | 1;
      try {
        out.write(bytes);
        out.flush();
      } finally {
        writingSince = 0;
      }
    }
  }
}
