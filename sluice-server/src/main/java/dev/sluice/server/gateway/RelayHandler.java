package dev.sluice.server.gateway;

import dev.sluice.core.Decision;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.policy.Check;
import dev.sluice.netty.HttpRateLimitHandler;
import dev.sluice.netty.HttpRateLimitSettings;
import dev.sluice.netty.RateLimitListener;
import dev.sluice.netty.ReadGate;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gateway's fast path for plain HTTP/1.1: it forwards requests as bytes instead of decoding
 * them into Netty's HTTP objects and encoding them again, which is most of what a proxied request
 * costs on the JVM (docs/bench/gateway.md). It sits in front of the full pipeline (HTTP codec,
 * {@link FrontHandler}, the limiter, {@link ProxyHandler}) and serves the requests it can:
 *
 * <ul>
 *   <li>The head is read in place ({@link RequestHead}, strict RFC 9112 syntax), the policy
 *       selects and decides on it as the limiter handler would (same selector, same listener), and
 *       an allowed request goes upstream as its own bytes with the forwarding fields rewritten
 *       ({@code Host}, {@code X-Forwarded-*}, {@code Forwarded}) as {@link Forwarding} does.
 *   <li>The response head is read in place ({@link ResponseHead}), rewritten without hop-by-hop
 *       fields and with the limit headers, and the body passes through as the buffers it arrived
 *       in, its end found from its framing.
 *   <li>Timeouts and upstream failures are the full pipeline's: the head timeout closes, the
 *       response timeout answers 504, a failed connection or a bad response 502.
 * </ul>
 *
 * <p>Everything else is handed to the full pipeline, which then serves the connection to its end:
 * the relay fires what it has read into the HTTP codec, as if it had never been there. That is a
 * request with a body, a hop-by-hop field or an upgrade, HTTP/1.0, pipelined requests, anything
 * that does not parse, {@code /healthz} and the decision API, a refused request (with its
 * decision, {@link HttpRateLimitHandler#PRESET}, so it is counted once and answered with the 429,
 * the delay or the 503 of the one implementation), and every request while the access log or
 * moderation is on. One instance per connection; event loop only.
 */
final class RelayHandler extends ChannelDuplexHandler implements RelayUpstream.Exchange {

  /** Bytes a client may send ahead while its exchange is in flight before its reads pause. */
  private static final int MAX_AHEAD = 16 * 1024;

  private enum State { HEAD, DECIDING, EXCHANGE }

  private final Snapshot.Source snapshots;
  private final RateLimiter limiter;
  private final RateLimitListener listener;
  private final GatewayEvents events;
  private final Upstream upstream;
  private final UpstreamPool pool;
  private final boolean decisionApi;
  private final byte[] hostField;
  private final LongAdder relayed;

  private ChannelHandlerContext ctx;
  private Channel client;
  private RequestHead head;
  private final HeadWriter writer = new HeadWriter();
  private final FieldWriter fieldWriter = new FieldWriter(writer);
  private State state = State.HEAD;
  private boolean closed;
  /** What the client sent that is not handled yet. */
  private ByteBuf in;
  private final HeadEnd headEnd = new HeadEnd();
  private int headLength;
  private RelayUpstream up;
  private Snapshot snap;
  private Check check;
  /** The decision whose limit headers the response gets, or null. */
  private Decision decision;
  private Deadline headTimer;
  private byte[] forwardedFor;
  private byte[] forwarded;

  RelayHandler(Snapshot.Source snapshots, RateLimiter limiter, RateLimitListener listener,
      GatewayEvents events, Upstream upstream, UpstreamPool pool, boolean decisionApi,
      LongAdder relayed) {
    this.snapshots = snapshots;
    this.limiter = limiter;
    this.listener = listener;
    this.events = events;
    this.upstream = upstream;
    this.pool = pool;
    this.decisionApi = decisionApi;
    this.relayed = relayed;
    this.hostField = ("host: " + upstream.authority + "\r\n").getBytes(StandardCharsets.US_ASCII);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.client = ctx.channel();
    this.headTimer = new Deadline(ctx.executor(), this::headTimeout);
    this.up = new RelayUpstream(ctx, upstream, pool, events, writer, this);
  }

  /** Held back from the full pipeline, which sees the connection open only if it takes over. */
  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    InetAddress address = client.remoteAddress() instanceof InetSocketAddress inet
        ? inet.getAddress() : null;
    String peer = Forwarding.peerIp(client);
    head = new RequestHead(address, peer);
    if (peer != null) {
      forwardedFor = ("x-forwarded-for: " + peer + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
      forwarded = ("forwarded: for=" + Forwarding.node(peer) + ";proto=http\r\n")
          .getBytes(StandardCharsets.ISO_8859_1);
    }
    armHeadTimer();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf buf) || closed) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (in == null) {
      in = buf;
    } else {
      if (in.writableBytes() < buf.readableBytes()) {
        ByteBuf bigger = ctx.alloc().buffer(in.readableBytes() + buf.readableBytes());
        headEnd.moved(in.readerIndex());
        bigger.writeBytes(in);
        in.release();
        in = bigger;
      }
      in.writeBytes(buf);
      buf.release();
    }
    if (state == State.HEAD) {
      readHead();
    } else if (in.readableBytes() > MAX_AHEAD) {
      ReadGate.pause(client, ReadGate.PIPELINE);
    }
  }

  private void readHead() {
    int end = headEnd.find(in);
    if (end == HeadEnd.BARE_LF) {
      fallBack(null);
      return;
    }
    if (end == HeadEnd.MISSING) {
      Snapshot s = snapshots.get();
      if (in.readableBytes() > s.gateway.maxInitialLineBytes() + s.gateway.maxHeaderBytes()) {
        fallBack(null);
      }
      return;
    }
    snap = snapshots.get();
    int length = end - in.readerIndex();
    if (length != in.readableBytes() || snap.accessLog || !snap.moderation.http().isEmpty()
        || !head.parse(in, length) || overCaps(length) || isServedAhead(head.path())) {
      fallBack(null);
      return;
    }
    headLength = length;
    headTimer.disarm();
    decide();
  }

  /** Heads at or near the caps are left to the decoder, which answers 414 and 431. */
  private boolean overCaps(int length) {
    int line = head.requestLineBytes();
    return line >= snap.gateway.maxInitialLineBytes()
        || length - line >= snap.gateway.maxHeaderBytes();
  }

  /** Paths the full pipeline answers itself, before any limit. */
  private boolean isServedAhead(String path) {
    return path.equals("/healthz") || (decisionApi && path.equals(DecisionApi.PATH));
  }

  private void decide() {
    HttpRateLimitSettings s = snap.http;
    try {
      check = s.selector().apply(head);
    } catch (RuntimeException e) {
      fallBack(null);   // the limiter handler reports it and applies onStoreError
      return;
    }
    if (check == null || check.exempt()) {
      if (check != null && check.allowlisted()) {
        listener.allowlisted(RateLimitListener.HTTP);
      }
      decided(null, false);
      return;
    }
    CompletableFuture<Decision> future;
    try {
      if (limiter.store().isLocal()) {
        decided(check.apply(limiter), true);
        return;
      }
      future = check.applyAsync(limiter).toCompletableFuture();
    } catch (RuntimeException e) {
      failed(e);
      return;
    }
    if (future.isDone() && !future.isCompletedExceptionally()) {
      decided(future.join(), true);
      return;
    }
    // Reads go on while the store decides: what arrives is held (up to MAX_AHEAD, then reads
    // pause), which spares two epoll_ctl calls per decision.
    state = State.DECIDING;
    future.whenComplete((d, e) -> {
      if (ctx.executor().inEventLoop()) {
        onDecision(d, e);   // Redis on this loop: answered here, no task
      } else {
        ctx.executor().execute(() -> onDecision(d, e));
      }
    });
  }

  private void onDecision(Decision d, Throwable e) {
    if (closed || state != State.DECIDING) {
      return;
    }
    state = State.HEAD;
    if (e != null) {
      failed(e);
    } else {
      decided(d, true);
    }
  }

  /**
   * A decision that threw: reported, and the rules' onStoreError decides, as in the handler; a
   * refusal is the handler's to report and answer (reported once, as there).
   */
  private void failed(Throwable e) {
    Decision d = Decision.failed(check.rules());
    if (!d.allowed()) {
      client.attr(HttpRateLimitHandler.PRESET_FAILURE).set(e);
      fallBack(null);
      return;
    }
    listener.decisionFailed(RateLimitListener.HTTP, check.rules(), e);
    decided(d, false);
  }

  private void decided(Decision d, boolean report) {
    if (d != null && !d.allowed()) {
      fallBack(d);
      return;
    }
    if (report && d != null && d.rule() != null) {
      listener.decision(RateLimitListener.HTTP, check.rules(), d);
    }
    decision = d;
    forward();
  }

  /** Sends the request head upstream with the forwarding fields rewritten. */
  private void forward() {
    ByteBuf out = Forwarding.relayHead(head, writer.reset(), hostField, forwardedFor, forwarded)
        .toBuffer(ctx.alloc());
    relayed.increment();
    in.skipBytes(headLength);
    if (!in.isReadable()) {
      in.release();
      in = null;
      headEnd.reset();
    }
    state = State.EXCHANGE;
    up.send(out, head.isHead(), snap);
  }

  @Override
  public void head(HeadWriter w) {
    if (decision != null) {
      HttpRateLimitHandler.writeLimitHeaders(decision, check, snap.http, fieldWriter);
    }
  }

  @Override
  public void ended() {
    exchangeDone();
    readAhead();
  }

  private void exchangeDone() {
    state = State.HEAD;
    decision = null;
    check = null;
    armHeadTimer();
  }

  /** Goes on with what the client sent while its exchange was in flight. */
  private void readAhead() {
    if (state == State.HEAD && in != null && in.isReadable()) {
      ReadGate.resume(client, ReadGate.PIPELINE);
      readHead();
    }
  }

  /** Answers 502 or 504 for the upstream, with the limit headers. */
  @Override
  public void failed(HttpResponseStatus status) {
    events.generated(status.code());
    FullHttpResponse r = Generated.error(head.toHttpRequest(), status, snap.cors, true);
    if (decision != null) {
      HttpRateLimitHandler.writeLimitHeaders(decision, check, snap.http,
          (name, value) -> r.headers().set(name, value));
    }
    ByteBuf out = Generated.encode(r, writer.reset(), ctx.alloc());
    ctx.writeAndFlush(out, ctx.voidPromise());
    exchangeDone();
    readAhead();
  }

  /**
   * Hands the connection to the full pipeline: it sees the connection open, then what the client
   * sent that is not handled yet; this handler leaves. With {@code preset}, the limiter handler
   * answers the request by that decision instead of deciding again.
   */
  private void fallBack(Decision preset) {
    if (preset != null) {
      client.attr(HttpRateLimitHandler.PRESET).set(preset);
    }
    ByteBuf rest = in;
    in = null;
    ReadGate.resume(client, ReadGate.PIPELINE);
    stop();
    ctx.fireChannelActive();
    if (rest != null) {
      ctx.fireChannelRead(rest);
      ctx.fireChannelReadComplete();
    }
    if (ctx.pipeline().context(this) != null) {
      ctx.pipeline().remove(this);
    }
  }

  /** Stops the timer and lets go of the upstream connection: kept for the loop when idle. */
  private void stop() {
    closed = true;
    headTimer.stop();
    up.release();
  }

  private void armHeadTimer() {
    long nanos = snapshots.get().gateway.handshakeTimeout().toNanos();
    if (nanos > 0) {
      headTimer.arm(nanos);
    } else {
      headTimer.disarm();
    }
  }

  private void headTimeout() {
    if (state == State.HEAD && client.isActive()) {
      ctx.close();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    up.clientWritable(client.isWritable());
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      ctx.close();
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  /** Held back too: the full pipeline never saw the connection open. */
  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    stop();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (!closed) {
      stop();
    }
    ReferenceCountUtil.release(in);
    in = null;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
