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
import java.security.SecureRandom;
import java.util.Map;
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
 * <p>What a slow reader costs. A stream is written only while Netty holds less than
 * {@value #QUEUE_BYTES} bytes for it; an event that finds no room is skipped (each is the whole
 * live view, so a page that catches up misses nothing but chart points it reloads). So a stream
 * holds at most that and one event in memory, and its kernel send buffer is fixed at
 * {@value #SEND_BUFFER} bytes: left alone, Linux grows it to megabytes (4.2 MB measured on
 * loopback) for a client that never reads. A stream that has had no room for
 * {@value #STALL_SECONDS} s is closed; when every slot is taken, a new page takes the slot of the
 * stream that has had no room the longest.
 *
 * <p>Why the page proves it reads. Room only runs out once the client's own receive buffer is
 * full (about 130 KiB with Linux's defaults), which at the idle console's 750 bytes a second
 * takes minutes. So every stream is sent its id first ({@code event: stream}) and a fresh random
 * nonce every {@value #NONCE_SECONDS} s ({@code event: ack}); the page sends the nonce back
 * ({@code GET /v1/console/ack?stream=ID&nonce=N}, {@link #ack}). A client that does not read
 * cannot know it, and its stream is closed {@value #ACK_SECONDS} s after the last nonce came
 * back (or after it opened).
 *
 * <p>All writes happen on the stream's own event loop; {@link #publish} hands them over, so the
 * console's thread never waits on a client. {@link #expireStalled} runs once a second.
 */
final class EventStreams implements AutoCloseable {

  static final int MAX = 16;
  static final long STALL_SECONDS = 10;
  /** A new proof-of-reading nonce this often; a stream whose page has not sent one back... */
  static final long NONCE_SECONDS = 10;
  /** ...for this long is closed. */
  static final long ACK_SECONDS = 30;
  /** The kernel's send buffer of a stream's connection (Linux doubles it: 32 KiB). */
  static final int SEND_BUFFER = 16 * 1024;
  /** Bytes Netty holds for a stream before the stream has no room (and skips events). */
  static final int QUEUE_BYTES = 8 * 1024;
  /** Sent first: the browser's reconnect delay and a comment that flushes the headers. */
  private static final byte[] HELLO = "retry: 2000\n: sluice console\n\n"
      .getBytes(StandardCharsets.UTF_8);

  private final int max;
  private final long stallNanos;
  private final long nonceNanos;
  private final long ackNanos;
  private final Map<String, Stream> byId = new ConcurrentHashMap<>();
  private final SecureRandom random = new SecureRandom();
  private final AtomicLong acks = new AtomicLong();
  private final LongSupplier nanos;
  private final Set<Stream> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger count = new AtomicInteger();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong cut = new AtomicLong();
  private volatile boolean closed;

  /**
   * At most {@value #MAX} streams; a stream without room closed after {@value #STALL_SECONDS} s,
   * one whose page has not sent a nonce back after {@value #ACK_SECONDS} s.
   */
  EventStreams() {
    this(MAX, Duration.ofSeconds(STALL_SECONDS), Duration.ofSeconds(ACK_SECONDS),
        System::nanoTime);
  }

  EventStreams(int max, Duration stallTimeout, Duration ackTimeout, LongSupplier nanos) {
    this.max = max;
    this.stallNanos = stallTimeout.toNanos();
    this.nonceNanos = Math.min(Duration.ofSeconds(NONCE_SECONDS).toNanos(),
        ackTimeout.toNanos() / 3);
    this.ackNanos = ackTimeout.toNanos();
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
    Stream s = new Stream(channel, token());
    open.add(s);
    byId.put(s.id, s);
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
    channel.write(new DefaultHttpContent(Unpooled.copiedBuffer("event: stream\ndata: "
        + s.id + "\n\n", StandardCharsets.US_ASCII)));
    s.nonce(nanos.getAsLong());
    if (first != null) {
      channel.write(new DefaultHttpContent(Unpooled.wrappedBuffer(first)));
    }
    channel.flush();
    return true;
  }

  /**
   * A page's proof that it reads stream {@code id}: {@code nonce} is one of the last two the
   * stream was sent. True when it is (the stream's ack clock restarts).
   */
  boolean ack(String id, String nonce) {
    Stream s = id == null ? null : byId.get(id);
    if (s == null || nonce == null || !s.knows(nonce)) {
      return false;
    }
    s.ackedAt = nanos.getAsLong();
    acks.incrementAndGet();
    return true;
  }

  private String token() {
    byte[] b = new byte[12];
    random.nextBytes(b);
    return java.util.HexFormat.of().formatHex(b);
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

  /**
   * Closes every stream that has had no room for the stall timeout, or whose page has sent no
   * nonce back for the ack timeout.
   */
  void expireStalled() {
    long now = nanos.getAsLong();
    for (Stream s : open) {
      boolean stalled = s.blocked && now - s.blockedSince >= stallNanos;
      boolean unread = now - s.ackedAt >= ackNanos;
      if ((stalled || unread) && s.release()) {
        cut.incrementAndGet();
        s.channel.close();
      }
    }
  }

  /** Nonces pages sent back, since start. */
  long acks() {
    return acks.get();
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

  /**
   * One open stream: its connection, whether and since when it has had no room, its id, its
   * last two nonces and when one came back.
   */
  private final class Stream {
    final Channel channel;
    final String id;
    volatile boolean blocked;
    volatile long blockedSince;
    volatile long ackedAt;
    private volatile String nonce;
    private volatile String previous;
    private long nonceAt;
    private final AtomicBoolean released = new AtomicBoolean();

    Stream(Channel channel, String id) {
      this.channel = channel;
      this.id = id;
      this.ackedAt = nanos.getAsLong();
    }

    /** On the loop: writes a new nonce (unflushed) and keeps the last one. */
    void nonce(long now) {
      previous = nonce;
      nonce = token();
      nonceAt = now;
      channel.write(new DefaultHttpContent(Unpooled.copiedBuffer("event: ack\ndata: " + nonce
          + "\n\n", StandardCharsets.US_ASCII)));
    }

    boolean knows(String n) {
      return n.equals(nonce) || n.equals(previous);
    }

    /** On the loop: the event when the connection has room, else a skip. */
    void send(byte[] event) {
      if (released.get() || !channel.isActive()) {
        return;
      }
      if (channel.isWritable()) {
        channel.write(new DefaultHttpContent(Unpooled.wrappedBuffer(event)),
            channel.voidPromise());
        long now = nanos.getAsLong();
        if (now - nonceAt >= nonceNanos) {
          nonce(now);
        }
        channel.flush();
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
      byId.remove(id);
      count.decrementAndGet();
      return true;
    }
  }
}
