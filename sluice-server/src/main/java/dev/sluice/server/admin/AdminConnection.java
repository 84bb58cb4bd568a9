package dev.sluice.server.admin;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One connection of the admin listener, and the registry that caps them. Everything here runs
 * on the listener's one event loop, so the state is plain fields.
 *
 * <p>A connection is always in one phase, and each phase but two has a deadline (the
 * {@link AdminOptions} timeouts), looked at four times per shortest timeout:
 *
 * <pre>
 * waiting   for a head: from the connection's start, or from the first byte of a next request,
 *           the head timeout; with no byte of a next request yet, the idle timeout
 * body      from the head's end to the body's end: the body timeout
 * working   an endpoint is answering: no deadline (each bounds its own waits)
 * writing   the answer is not all taken by the client: the idle timeout
 * streaming an event stream: {@link EventStreams} decides
 * </pre>
 *
 * <p>A connection past its deadline is closed without an answer: a client that stalls will not
 * read one either. A connection past the cap closes the one that has been waiting (for a head,
 * a body or a next request) the longest; when every connection is working, writing or
 * streaming, the new one is closed at once.
 */
final class AdminConnection extends ChannelInboundHandlerAdapter {

  enum Phase { WAITING, BODY, WORKING, WRITING, STREAMING }

  /** The open connections, their cap and the timer that looks at their deadlines. */
  static final class Registry {
    private final AdminServer server;
    private final Set<AdminConnection> open = new LinkedHashSet<>();

    Registry(AdminServer server) {
      this.server = server;
    }

    void accept(SocketChannel ch) {
      if (open.size() >= server.options.maxConnections() && !evictOne()) {
        server.metrics.adminClosed("full");
        ch.close();
        return;
      }
      AdminConnection c = new AdminConnection(server, ch);
      open.add(c);
      ch.closeFuture().addListener(f -> open.remove(c));
      ch.pipeline().addLast("bytes", c.bytes)
          .addLast("http", new HttpServerCodec(AdminServer.MAX_LINE, AdminServer.MAX_HEADERS,
              8192))
          .addLast("heads", c.heads)
          .addLast("body", new HttpObjectAggregator(AdminServer.MAX_BODY, true))
          .addLast("admin", c);
    }

    /** Closes the connection that has waited longest; false when none is waiting. */
    private boolean evictOne() {
      AdminConnection victim = null;
      for (AdminConnection c : open) {
        if ((c.phase == Phase.WAITING || c.phase == Phase.BODY)
            && (victim == null || c.waitingSince() - victim.waitingSince() < 0)) {
          victim = c;
        }
      }
      if (victim == null) {
        return false;
      }
      open.remove(victim);
      server.metrics.adminClosed("cap");
      victim.channel.close();
      return true;
    }

    void startSweeping() {
      AdminOptions o = server.options;
      long shortest = Math.min(o.headTimeout().toNanos(), Math.min(o.bodyTimeout().toNanos(),
          o.idleTimeout().toNanos()));
      long every = Math.max(TimeUnit.MILLISECONDS.toNanos(25), shortest / 4);
      server.connectionsLoop().scheduleAtFixedRate(this::sweep, every, every,
          TimeUnit.NANOSECONDS);
    }

    void sweep() {
      long now = server.nanos.getAsLong();
      for (AdminConnection c : Set.copyOf(open)) {
        if (now - c.deadline() >= 0) {
          server.metrics.adminClosed(c.timeoutReason());
          c.channel.close();
        }
      }
    }

    int size() {
      return open.size();
    }

    List<AdminConnection> all() {
      return List.copyOf(open);
    }
  }

  private final AdminServer server;
  final Channel channel;
  private Phase phase = Phase.WAITING;
  /** When the current phase began (the listener's clock). */
  private long phaseSince;
  /** Whether a head has begun (its first byte came, or the connection is new), and when. */
  private boolean headStarted;
  private long headSince;
  private final ArrayDeque<FullHttpRequest> queue = new ArrayDeque<>();
  private boolean closing;

  /** Sees bytes before the codec: the start of a head, and bytes sent to a stream (dropped). */
  final ChannelInboundHandlerAdapter bytes = new ChannelInboundHandlerAdapter() {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (phase == Phase.STREAMING) {
        ReferenceCountUtil.release(msg);
        return;
      }
      // Bytes outside a body start the next head (pipelined ones too, while one is answered).
      if (!headStarted && phase != Phase.BODY && msg instanceof ByteBuf b && b.isReadable()) {
        headStarted = true;
        headSince = server.nanos.getAsLong();
      }
      ctx.fireChannelRead(msg);
    }
  };

  /** Sees heads and last contents after the codec: the body phase between them. */
  final ChannelInboundHandlerAdapter heads = new ChannelInboundHandlerAdapter() {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof HttpRequest) {
        headStarted = false;
        if (phase == Phase.WAITING) {
          enter(Phase.BODY);
        }
      }
      if (msg instanceof LastHttpContent && phase == Phase.BODY) {
        enter(Phase.WAITING);
      }
      ctx.fireChannelRead(msg);
    }
  };

  private AdminConnection(AdminServer server, Channel channel) {
    this.server = server;
    this.channel = channel;
    this.phaseSince = server.nanos.getAsLong();
    this.headStarted = true;
    this.headSince = phaseSince;
  }

  private void enter(Phase p) {
    phase = p;
    phaseSince = server.nanos.getAsLong();
  }

  /** Since when this connection has waited in its phase (for eviction: oldest first). */
  long waitingSince() {
    return phase == Phase.WAITING && headStarted ? headSince : phaseSince;
  }

  /** When this connection's phase times out; far ahead for the phases without a deadline. */
  long deadline() {
    AdminOptions o = server.options;
    return switch (phase) {
      case WAITING -> headStarted ? headSince + o.headTimeout().toNanos()
          : phaseSince + o.idleTimeout().toNanos();
      case BODY -> phaseSince + o.bodyTimeout().toNanos();
      case WRITING -> phaseSince + o.idleTimeout().toNanos();
      case WORKING, STREAMING -> server.nanos.getAsLong() + Long.MAX_VALUE / 2;
    };
  }

  /** Which timeout {@link #deadline()} is, for the metric. */
  String timeoutReason() {
    return switch (phase) {
      case WAITING -> headStarted ? "head-timeout" : "idle-timeout";
      case BODY -> "body-timeout";
      default -> "idle-timeout";
    };
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest req) || phase == Phase.STREAMING || closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (queue.size() >= AdminServer.MAX_PIPELINED) {
      ReferenceCountUtil.release(req);
      closing = true;
      ctx.close();
      return;
    }
    queue.add(req);
    if (phase == Phase.WAITING || phase == Phase.BODY) {
      next();
    }
  }

  /** Answers the next request in the queue, if any. */
  private void next() {
    FullHttpRequest req = queue.poll();
    if (req == null) {
      return;
    }
    enter(Phase.WORKING);
    try {
      if (req.decoderResult().isFailure()) {
        Throwable cause = req.decoderResult().cause();
        int status = cause instanceof TooLongHttpLineException ? 414
            : cause instanceof TooLongHttpHeaderException ? 431 : 400;
        String what = status == 414 ? "the request line may be at most " + AdminServer.MAX_LINE
            + " bytes" : status == 431 ? "the header section may be at most "
            + AdminServer.MAX_HEADERS + " bytes" : "a malformed request";
        server.metrics.adminRefused("malformed");
        write(req, AdminAnswer.json(status, "{\"error\":\"" + what + "\"}"), true);
        return;
      }
      AdminCall call = call(req);
      AdminDoor.Verdict v = server.door.check(call, (InetSocketAddress) channel.localAddress());
      if (v.refusal() != null) {
        server.metrics.adminRefused(v.reason());
        write(req, v.refusal(), false);
        return;
      }
      AdminAnswer now = server.answerNow(call);
      if (now != null) {
        write(req, now, false);
        return;
      }
      try {
        server.workers.execute(() -> {
          AdminAnswer a;
          try {
            a = server.answer(call, v.auth());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            a = AdminAnswer.json(503, "{\"error\":\"the server is stopping\"}");
          } catch (RuntimeException e) {
            a = AdminAnswer.json(500, "{\"error\":\"internal error\"}");
          }
          AdminAnswer answer = a;
          channel.eventLoop().execute(() -> write(req, answer, false));
        });
      } catch (RejectedExecutionException e) {
        server.metrics.adminRefused("busy");
        write(req, AdminAnswer.json(503, "{\"error\":\"the admin API is busy: " + AdminServer.QUEUE
            + " requests are waiting\"}").with("Retry-After", "1"), false);
      }
    } catch (RuntimeException e) {
      write(req, AdminAnswer.json(500, "{\"error\":\"internal error\"}"), true);
    }
  }

  private AdminCall call(FullHttpRequest req) {
    String uri = req.uri();
    int q = uri.indexOf('?');
    String rawPath = q < 0 ? uri : uri.substring(0, q);
    String rawQuery = q < 0 ? null : uri.substring(q + 1);
    if (rawPath.startsWith("http://") || rawPath.startsWith("https://")) {
      // an absolute form: the path is what follows the authority
      int slash = rawPath.indexOf('/', rawPath.indexOf("//") + 2);
      rawPath = slash < 0 ? "/" : rawPath.substring(slash);
    }
    if (rawPath.isEmpty() || rawPath.charAt(0) != '/') {
      rawPath = "/" + rawPath;
    }
    HttpHeaders h = req.headers();
    byte[] body = ByteBufUtil.getBytes(req.content());
    return new AdminCall(req.method().name(), rawPath, rawQuery, h::get, body,
        (InetSocketAddress) channel.remoteAddress());
  }

  /** On the loop: writes {@code a} to {@code req}, then reads the next request or closes. */
  private void write(FullHttpRequest req, AdminAnswer a, boolean close) {
    try {
      if (!channel.isActive()) {
        return;
      }
      boolean head = req.method().name().equals("HEAD");
      if (a.streams != null && head) {
        a = AdminAnswer.of(200, a.type, new byte[0]);   // its head only: no stream opens
      }
      if (a.streams != null) {
        HttpResponse start = new DefaultHttpResponse(HttpVersion.HTTP_1_1,
            HttpResponseStatus.OK);
        headers(start.headers(), a);
        start.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        start.headers().set("X-Accel-Buffering", "no");
        enter(Phase.STREAMING);
        if (a.streams.open(channel, start, a.firstEvent)) {
          return;
        }
        enter(Phase.WORKING);
        a = a.whenFull;
      }
      boolean keepAlive = !close && HttpUtil.isKeepAlive(req);
      FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
          HttpResponseStatus.valueOf(a.status),
          head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(a.body));
      headers(r.headers(), a);
      r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, a.body.length);
      if (!keepAlive) {
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        closing = true;
      }
      enter(Phase.WRITING);
      channel.writeAndFlush(r).addListener((ChannelFutureListener) f -> {
        if (!f.isSuccess() || !keepAlive) {
          channel.close();
          return;
        }
        enter(Phase.WAITING);
        next();
      });
    } finally {
      req.release();
    }
  }

  static void headers(HttpHeaders h, AdminAnswer a) {
    h.set(HttpHeaderNames.CONTENT_TYPE, a.type);
    h.set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    h.set("Content-Security-Policy", AdminServer.CSP);
    h.set("X-Content-Type-Options", "nosniff");
    h.set("Referrer-Policy", "no-referrer");
    a.headers.forEach(h::set);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // a reset, a broken pipe, a frame past the caps the codec could not answer: the end of it
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    FullHttpRequest r;
    while ((r = queue.poll()) != null) {
      r.release();
    }
    ctx.fireChannelInactive();
  }
}
