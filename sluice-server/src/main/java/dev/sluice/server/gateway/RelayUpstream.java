package dev.sluice.server.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;

/**
 * The upstream side of a {@link RelayHandler}: one kept-alive connection (from the loop's pool, or
 * opened), the request head written to it, the response head read in place and rewritten
 * ({@link ResponseHead}), the body relayed as the buffers it arrives in until its framing says it
 * ended, and the response timeout. What the client gets besides the upstream's bytes (the limit
 * headers, a generated 502 or 504) comes from the handler through {@link Exchange}. One per
 * client connection; event loop only.
 */
final class RelayUpstream implements UpstreamPool.Owner {

  private static final int MAX_RESPONSE_HEAD = 64 * 1024;

  /** The client side's part of an exchange. */
  interface Exchange {
    /** Adds the client side's fields (the limit headers) to the response head. */
    void head(HeadWriter w);

    /** The response ended; the connection can read its next request. */
    void ended();

    /** No response head came: the client side answers {@code status} (502 or 504). */
    void failed(HttpResponseStatus status);
  }

  private enum State { IDLE, SENT, BODY }

  private final ChannelHandlerContext ctx;
  private final Channel client;
  private final Upstream upstream;
  private final UpstreamPool pool;
  private final GatewayEvents events;
  private final HeadWriter writer;
  private final Exchange exchange;
  private final ResponseHead response = new ResponseHead();
  private final Deadline responseTimer;

  private State state = State.IDLE;
  private boolean released;
  private Channel up;
  private boolean connecting;
  private ByteBuf unsent;
  /** A response head that has not fully arrived. */
  private ByteBuf upIn;
  private boolean headRequest;
  private Snapshot snap;

  RelayUpstream(ChannelHandlerContext ctx, Upstream upstream, UpstreamPool pool,
      GatewayEvents events, HeadWriter writer, Exchange exchange) {
    this.ctx = ctx;
    this.client = ctx.channel();
    this.upstream = upstream;
    this.pool = pool;
    this.events = events;
    this.writer = writer;
    this.exchange = exchange;
    this.responseTimer = new Deadline(ctx.executor(), this::responseTimeout);
  }

  /** Sends a request head (a whole request: the relay forwards none with a body). */
  void send(ByteBuf head, boolean headRequest, Snapshot snap) {
    this.headRequest = headRequest;
    this.snap = snap;
    state = State.SENT;
    if (up != null && up.isActive()) {
      write(head);
      return;
    }
    up = pool.take(client.eventLoop(), this);
    if (up != null) {
      write(head);
      return;
    }
    unsent = head;
    connecting = true;
    pool.connect(client.eventLoop(), snap, this).addListener((ChannelFutureListener) done -> {
      connecting = false;
      ByteBuf msg = unsent;
      unsent = null;
      if (released) {
        ReferenceCountUtil.release(msg);
        done.channel().close();
        return;
      }
      if (!done.isSuccess()) {
        ReferenceCountUtil.release(msg);
        fail(HttpResponseStatus.BAD_GATEWAY,
            "could not connect: " + Generated.reason(done.cause()));
        return;
      }
      up = done.channel();
      write(msg);
    });
  }

  private void write(ByteBuf head) {
    up.writeAndFlush(head, up.voidPromise());
    long nanos = snap.gateway.upstreamResponseTimeout().toNanos();
    if (nanos > 0) {
      responseTimer.arm(nanos);
    }
  }

  @Override
  public void upstreamRead(Channel u, Object msg) {
    if (u != up || !(msg instanceof ByteBuf buf) || state == State.IDLE) {
      // Bytes nobody asked for: the connection is out of step and cannot be reused.
      ReferenceCountUtil.release(msg);
      if (u == up) {
        up = null;
      }
      u.close();
      return;
    }
    if (state == State.SENT) {
      buf = responseHead(buf);
      if (buf == null) {
        return;
      }
    }
    relayBody(buf);
  }

  /** Reads the response head from {@code buf}; returns what follows it, or null for now. */
  private ByteBuf responseHead(ByteBuf buf) {
    if (upIn != null) {
      upIn.writeBytes(buf);
      buf.release();
      buf = upIn;
      upIn = null;
    }
    while (true) {
      int end = headEnd(buf);
      if (end < 0) {
        if (buf.readableBytes() > MAX_RESPONSE_HEAD) {
          buf.release();
          fail(HttpResponseStatus.BAD_GATEWAY, "invalid response: head over "
              + MAX_RESPONSE_HEAD + " bytes");
          return null;
        }
        upIn = ctx.alloc().buffer(Math.max(1024, buf.readableBytes() * 2));
        upIn.writeBytes(buf);
        buf.release();
        return null;
      }
      int length = end - buf.readerIndex();
      if (!response.parse(buf, length, headRequest) || response.status() == 101) {
        buf.release();
        fail(HttpResponseStatus.BAD_GATEWAY, "invalid response head");
        return null;
      }
      buf.skipBytes(length);
      if (!response.interim()) {
        break;
      }
      response.writeInterim(writer.reset());
      ctx.write(writer.toBuffer(ctx.alloc()), ctx.voidPromise());
    }
    responseTimer.disarm();
    HeadWriter w = writer.reset();
    response.writeHead(w);
    exchange.head(w);
    w.crlf();
    ctx.write(w.toBuffer(ctx.alloc()), ctx.voidPromise());
    state = State.BODY;
    return buf;
  }

  /** The index after a head's empty line in {@code buf}, or -1. */
  private static int headEnd(ByteBuf buf) {
    int from = buf.readerIndex();
    int to = buf.writerIndex();
    while (true) {
      int lf = buf.indexOf(from, to, (byte) '\n');
      if (lf < 0) {
        return -1;
      }
      if (lf - 3 >= buf.readerIndex() && buf.getByte(lf - 1) == '\r'
          && buf.getByte(lf - 2) == '\n' && buf.getByte(lf - 3) == '\r') {
        return lf + 1;
      }
      from = lf + 1;
    }
  }

  private void relayBody(ByteBuf buf) {
    int n = buf.readableBytes();
    int body = response.body(buf, buf.readerIndex(), n);
    if (body < 0) {
      buf.release();
      ctx.flush();
      fail(HttpResponseStatus.BAD_GATEWAY, "invalid chunked body");
      return;
    }
    if (body > 0) {
      ctx.write(buf.retainedSlice(buf.readerIndex(), body), ctx.voidPromise());
    }
    buf.release();
    boolean done = response.bodyDone();
    if (done) {
      if (!response.upstreamKeepAlive() || body < n) {
        closeUpstream();   // done, or sent more than its response: not reusable
      }
      state = State.IDLE;
    }
    ctx.flush();
    if (up != null && !client.isWritable()) {
      up.config().setAutoRead(false);
    }
    if (done) {
      exchange.ended();
    }
  }

  @Override
  public void upstreamWritable(Channel u) {}

  @Override
  public void upstreamClosed(Channel u) {
    if (u != up) {
      return;
    }
    up = null;
    if (state == State.SENT) {
      fail(HttpResponseStatus.BAD_GATEWAY, "closed the connection before answering");
    } else if (state == State.BODY) {
      // The end of a body framed by the close, or a body cut short: the client's ends too.
      state = State.IDLE;
      ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }
  }

  private void responseTimeout() {
    if (state == State.SENT) {
      fail(HttpResponseStatus.GATEWAY_TIMEOUT, "no response within "
          + snap.gateway.upstreamResponseTimeout().toMillis() + " ms");
    }
  }

  /**
   * The upstream failed the exchange: reported, and answered 502 or 504 by the client side, or,
   * once the response has begun, the client connection closes. The client learns no more than
   * the status; the upstream's address and the cause are for the log.
   */
  private void fail(HttpResponseStatus status, String cause) {
    responseTimer.disarm();
    closeUpstream();
    boolean began = state == State.BODY;
    state = State.IDLE;
    events.upstreamFailed(status.code(), upstream.authority, cause);
    if (began) {
      client.close();
    } else {
      exchange.failed(status);
    }
  }

  private void closeUpstream() {
    if (up != null) {
      Channel u = up;
      up = null;
      u.close();
    }
  }

  /** Follows the client's writability: a client that does not read stops the upstream's reads. */
  void clientWritable(boolean writable) {
    if (up != null) {
      up.config().setAutoRead(writable);
    }
  }

  /** The client side is done: an idle connection goes back to the loop's pool, else closes. */
  void release() {
    released = true;
    responseTimer.stop();
    if (up != null) {
      if (state == State.IDLE && !connecting) {
        up.config().setAutoRead(true);   // paused for a slow client: the next owner reads
        pool.giveBack(up);
      } else {
        up.close();
      }
      up = null;
    }
    ReferenceCountUtil.release(upIn);
    upIn = null;
  }
}
