package dev.sluice.server.admin;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The console's server-sent event streams: at most {@value #MAX} open at once (one per open
 * console page), each sent every event while its client takes them.
 *
 * <p>What a slow reader costs. A stream's connection is not written while Netty holds more than
 * the admin listener's high water mark for it ({@link AdminServer#WRITE_HIGH_WATER} bytes):
 * the event is skipped (each is the whole live view, so a page that catches up misses nothing
 * but history the charts reload). So a stream holds at most that mark plus one event in memory,
 * besides the kernel's socket buffers. A stream that has had no room for {@value
 * #STALL_SECONDS} s ({@link #expireStalled}, once a second) is closed, and its slot is free; when
 * every slot is taken, a new page takes the slot of the stream that has had no room the longest.
 * A page that reads never loses its stream to one that does not.
 *
 * <p>All writes happen on the stream's own event loop; {@link #publish} hands them over, so the
 * console's thread never waits on a client.
 */
final class EventStreams implements AutoCloseable {

  static final int MAX = 16;
  static final long STALL_SECONDS = 10;
  /** The kernel's send buffer of a stream's connection (Linux doubles it: 32 KiB). */
  static final int SEND_BUFFER = 16 * 1024;
  /** Bytes Netty holds for a stream before the stream has no room (and skips events). */
  static final int QUEUE_BYTES = 8 * 1024;
  /** Sent first: the browser's reconnect delay and a comment that flushes the headers. */
  private static final byte[] HELLO = "retry: 2000\n: sluice console\n\n"
      .getBytes(StandardCharsets.UTF_8);

  private final int max;
  private final long stallNanos;
  private final LongSupplier nanos;
  private final Set<Stream> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger count = new AtomicInteger();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong cut = new AtomicLong();
  private volatile boolean closed;

  /** At most {@value #MAX} streams, a stream without room closed after {@value #STALL_SECONDS} s. */
  EventStreams() {
    this(MAX, Duration.ofSeconds(STALL_SECONDS), System::nanoTime);
  }

  EventStreams(int max, Duration stallTimeout, LongSupplier nanos) {
    this.max = max;
    this.stallNanos = stallTimeout.toNanos();
    this.nanos = nanos;
  }

  /**
   * On {@code channel}'s event loop: writes {@code head}, the hello and {@code first} (when not
   * null), and keeps the stream until its connection closes; false, with nothing written, when
   * every slot is taken by a stream that has room.
   */
  boolean open(Channel channel, HttpResponse head, byte[] first) {
    if (closed || !reserve()) {
      refused.incrementAndGet();
      return false;
    }
    // A fixed, small send buffer: the kernel's own grows to megabytes for a client that never
    // reads (4.2 MB on Linux loopback), which would hide a stalled page for half an hour.
    channel.config().setOption(ChannelOption.SO_SNDBUF, SEND_BUFFER);
    channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(QUEUE_BYTES / 2,
        QUEUE_BYTES));
    Stream s = new Stream(channel);
    open.add(s);
    channel.closeFuture().addListener(f -> s.release());
    channel.pipeline().addLast("room", new ChannelInboundHandlerAdapter() {
      @Override
      public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        s.room(ctx.channel().isWritable());
        ctx.fireChannelWritabilityChanged();
      }
    });
    channel.write(head);
    channel.write(new DefaultHttpContent(Unpooled.wrappedBuffer(HELLO)));
    if (first != null) {
      channel.write(new DefaultHttpContent(Unpooled.wrappedBuffer(first)));
    }
    channel.flush();
    return true;
  }

  /** A slot, taken from the stream that has had no room the longest when all are taken. */
  private boolean reserve() {
    for (;;) {
      int n = count.get();
      if (n < max) {
        if (count.compareAndSet(n, n + 1)) {
          return true;
        }
        continue;
      }
      Stream victim = null;
      long victimSince = 0;
      for (Stream s : open) {
        long since = s.blockedSince;
        if (s.blocked && (victim == null || since - victimSince < 0)) {
          victim = s;
          victimSince = since;
        }
      }
      if (victim == null) {
        return false;
      }
      if (victim.release()) {
        cut.incrementAndGet();
        victim.channel.close();
      }
    }
  }

  /** Hands {@code event} (one or more complete SSE events) to every open stream. */
  void publish(byte[] event) {
    for (Stream s : open) {
      s.channel.eventLoop().execute(() -> s.send(event));
    }
  }

  /** Closes every stream that has had no room for the stall timeout. */
  void expireStalled() {
    long now = nanos.getAsLong();
    for (Stream s : open) {
      if (s.blocked && now - s.blockedSince >= stallNanos && s.release()) {
        cut.incrementAndGet();
        s.channel.close();
      }
    }
  }

  /** Streams at most. */
  int max() {
    return max;
  }

  /** The most bytes any open stream's connection holds unwritten (Netty's, not the kernel's). */
  long mostQueued() {
    long most = 0;
    for (Stream s : open) {
      var out = s.channel.unsafe().outboundBuffer();
      most = Math.max(most, out == null ? 0 : out.totalPendingWriteBytes());
    }
    return most;
  }

  /** Streams that had no room at the last event. */
  int blockedStreams() {
    return (int) open.stream().filter(s -> s.blocked).count();
  }

  /** Streams open now. */
  int count() {
    return count.get();
  }

  /** Streams refused because every slot was taken, since start. */
  long refused() {
    return refused.get();
  }

  /** Events not written to a stream that had no room, since start. */
  long skipped() {
    return skipped.get();
  }

  /** Streams closed because they had no room for the stall timeout, or gave their slot up. */
  long cut() {
    return cut.get();
  }

  @Override
  public void close() {
    closed = true;
    for (Stream s : open) {
      s.release();
      s.channel.close();
    }
  }

  /** One open stream: its connection, and whether and since when it has had no room. */
  private final class Stream {
    final Channel channel;
    volatile boolean blocked;
    volatile long blockedSince;
    private final AtomicBoolean released = new AtomicBoolean();

    Stream(Channel channel) {
      this.channel = channel;
    }

    /** On the loop: the event when the connection has room, else a skip. */
    void send(byte[] event) {
      if (released.get() || !channel.isActive()) {
        return;
      }
      if (channel.isWritable()) {
        channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event)),
            channel.voidPromise());
      } else {
        skipped.incrementAndGet();
      }
    }

    /** On the loop, when Netty's queue for the stream crosses a water mark. */
    void room(boolean writable) {
      if (!writable && !blocked) {
        blockedSince = nanos.getAsLong();
      }
      blocked = !writable;
    }

    /** Gives the slot back, once; true the first time. */
    boolean release() {
      if (!released.compareAndSet(false, true)) {
        return false;
      }
      open.remove(this);
      count.decrementAndGet();
      return true;
    }
  }
}
