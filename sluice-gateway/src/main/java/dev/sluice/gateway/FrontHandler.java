package dev.sluice.gateway;

import dev.sluice.netty.Exchange;
import dev.sluice.netty.ReadGate;
import dev.sluice.netty.WebSockets;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * The gateway's first handler after the HTTP codec: it protects the rest of the pipeline.
 *
 * <ul>
 *   <li>Requests the decoder could not read: 414 (request line too long), 431 (headers too
 *       large), 400 otherwise; then the connection is closed.
 *   <li>The head timeout: a connection that has not sent a complete request head within the
 *       handshake timeout (after connecting, or after its previous exchange) is closed, so a
 *       slow client cannot hold a socket by trickling bytes.
 *   <li>The request target is normalised (core's {@code RequestTarget}, the relay's rule): an
 *       absolute {@code :path} is reduced to its path, a target that cannot be read is 400,
 *       {@code CONNECT} 405; what follows sees, and forwards, the normalised target.
 *   <li>{@code gateway.healthPath}, when set, is answered here, before any limit.
 *   <li>The body cap: a declared {@code Content-Length} over the cap is refused with 413 before
 *       anything is forwarded; a streamed body is counted and cut at the cap (413 if no response
 *       has started, then close).
 *   <li>Pipelining: the next request waits until the current exchange is complete, so responses
 *       keep their order whoever writes them (the limiter's 429, the proxy).
 *   <li>The idle timeout: a plain connection is closed; a WebSocket gets 1001 "idle timeout".
 * </ul>
 */
final class FrontHandler extends ChannelDuplexHandler {

  private static final int MAX_HELD = 64;

  private final Snapshot.Source snapshots;
  private final GatewayEvents events;

  private final ArrayDeque<Object> held = new ArrayDeque<>();
  private Snapshot snapshot;
  private HttpRequest current;
  private boolean inFlight;
  private boolean requestDone;
  private boolean responseDone;
  private boolean responseStarted;
  private boolean interim;
  private boolean discarding;
  private boolean upgraded;
  private boolean closing;
  /** Whether this handler holds the channel's {@link ReadGate#PIPELINE} pause. */
  private boolean pipelinePaused;
  private long bodyBytes;
  /** The head timeout, armed while a connection owes the next request head. */
  private Deadline head;
  /** The access log's record of the current exchange, or null when the log is off. */
  private AccessRecord access;

  FrontHandler(Snapshot.Source snapshots, GatewayEvents events) {
    this.snapshots = snapshots;
    this.events = events;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    armHeadTimer(ctx);
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (upgraded) {
      if (msg instanceof HttpContent) {
        ReferenceCountUtil.release(msg);
      } else {
        ctx.fireChannelRead(msg);
      }
      return;
    }
    if (!held.isEmpty() || (inFlight && msg instanceof HttpRequest)) {
      if (held.size() >= MAX_HELD) {
        ReferenceCountUtil.release(msg);
        ctx.close();
        return;
      }
      held.add(msg);
      if (!pipelinePaused) {
        pipelinePaused = true;
        ReadGate.pause(ctx.channel(), ReadGate.PIPELINE);
      }
      return;
    }
    process(ctx, msg);
  }

  private void process(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpRequest request) {
      onRequest(ctx, request);
      return;
    }
    if (msg instanceof HttpContent content) {
      boolean last = msg instanceof LastHttpContent;
      if (discarding || !inFlight) {
        content.release();
        if (last) {
          discarding = false;
          requestFinished(ctx);
        }
        return;
      }
      bodyBytes += content.content().readableBytes();
      if (bodyBytes > snapshot.gateway.maxBodyBytes()) {
        content.release();
        tooLarge(ctx);
        return;
      }
      ctx.fireChannelRead(msg);
      if (last) {
        requestFinished(ctx);
      }
      return;
    }
    ctx.fireChannelRead(msg);
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
    cancelHeadTimer();
    snapshot = snapshots.get();
    // Every later handler reads this exchange's settings from here: one snapshot per request.
    Exchange exchange = Exchange.begin(ctx.channel(), request, snapshot.http, snapshot.ws,
        snapshot);
    access = AccessRecord.begin(ctx.channel(), snapshot, exchange);
    current = request;
    inFlight = true;
    requestDone = false;
    responseDone = false;
    responseStarted = false;
    discarding = false;
    bodyBytes = 0;
    boolean full = request instanceof LastHttpContent;
    if (request.decoderResult().isFailure()) {
      ReferenceCountUtil.release(request);
      HttpResponseStatus status = Generated.decodeFailure(request.decoderResult().cause());
      respond(ctx, request, status, Generated.error(status.reasonPhrase().toLowerCase(), null),
          false);
      return;
    }
    String problem = normalize(request);
    if (problem != null) {
      ReferenceCountUtil.release(request);
      discarding = !full;
      HttpResponseStatus status = problem.startsWith("CONNECT")
          ? HttpResponseStatus.METHOD_NOT_ALLOWED : HttpResponseStatus.BAD_REQUEST;
      respond(ctx, request, status, Generated.error(status.reasonPhrase().toLowerCase(
          java.util.Locale.ROOT), problem), false);
      return;
    }
    if (isHealthCheck(request, snapshot.gateway.healthPath())) {
      access = null;
      discarding = !full;
      ReferenceCountUtil.release(request);
      boolean keepAlive = HttpUtil.isKeepAlive(request) && !discarding;
      ctx.writeAndFlush(Generated.json(request, HttpResponseStatus.OK, "{\"status\":\"ok\"}",
          null, keepAlive)).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
              : ChannelFutureListener.CLOSE);
      responseDone = true;
      if (full) {
        requestFinished(ctx);
      }
      return;
    }
    long declared = HttpUtil.getContentLength(request, -1L);
    if (declared > snapshot.gateway.maxBodyBytes()) {
      ReferenceCountUtil.release(request);
      discarding = true;
      respond(ctx, request, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          Generated.error("payload too large", "the request body may be at most "
              + snapshot.gateway.maxBodyBytes() + " bytes"), false);
      return;
    }
    ctx.fireChannelRead(request);
    if (full) {
      requestFinished(ctx);
    }
  }

  /**
   * Rewrites the request's target to its normalised form, as the relay forwards it; the reason
   * it cannot be served, or null.
   */
  private String normalize(HttpRequest request) {
    if (HttpMethod.CONNECT.equals(request.method())) {
      return "CONNECT is not served";
    }
    dev.sluice.core.policy.RequestTarget t = dev.sluice.core.policy.RequestTarget.parse(
        request.uri(), snapshot.config.policy().paths());
    if (!t.ok()) {
      return t.problem();
    }
    if (t.asterisk() && !HttpMethod.OPTIONS.equals(request.method())) {
      return "the asterisk form is for OPTIONS only";
    }
    String host = request.headers().get(io.netty.handler.codec.http.HttpHeaderNames.HOST);
    if (t.authority() != null && (host == null || !t.authority().equalsIgnoreCase(host))) {
      return "an absolute-form target whose authority is not the Host";
    }
    request.setUri(t.forwardTarget());
    return null;
  }

  /** The gateway's own health path ({@code gateway.healthPath}, none by default). */
  static boolean isHealthCheck(HttpRequest request, String path) {
    if (path == null || (!HttpMethod.GET.equals(request.method())
        && !HttpMethod.HEAD.equals(request.method()))) {
      return false;
    }
    String uri = request.uri();
    return uri.equals(path) || uri.startsWith(path + "?");
  }

  private void tooLarge(ChannelHandlerContext ctx) {
    discarding = true;
    if (responseStarted) {
      ctx.close();
      return;
    }
    respond(ctx, current, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
        Generated.error("payload too large", "the request body may be at most "
            + snapshot.gateway.maxBodyBytes() + " bytes"), false);
  }

  /** Writes a generated response from here; with {@code keepAlive} false, closes after it. */
  private void respond(ChannelHandlerContext ctx, HttpRequest request, HttpResponseStatus status,
      String json, boolean keepAlive) {
    events.generated(status.code());
    responseDone = true;
    responseStarted = true;
    Object response = Generated.json(request, status, json,
        snapshot == null ? null : snapshot.cors, keepAlive);
    ChannelPromise promise = ctx.newPromise();
    if (access != null) {
      // Written from here, so it passes this handler's write() by: logged here.
      access.generated();
      promise = accessLogged(ctx, response, true, promise);
    }
    ChannelFuture f = ctx.writeAndFlush(response, promise);
    if (keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    } else {
      f.addListener(done -> lingeringClose(ctx));
    }
  }

  /**
   * Closes after a response that ends the connection while the client may still be sending: the
   * output is shut first and input is drained for a moment, so the client reads the response
   * instead of a reset (closing a socket with unread input sends RST, which can destroy the
   * response in flight).
   */
  private void lingeringClose(ChannelHandlerContext ctx) {
    closing = true;
    if (!LingeringClose.start(ctx, ctx.channel())) {
      ctx.close();
    }
  }

  private void requestFinished(ChannelHandlerContext ctx) {
    requestDone = true;
    if (responseDone) {
      exchangeFinished(ctx);
    }
  }

  private void responseFinished(ChannelHandlerContext ctx) {
    responseDone = true;
    if (requestDone) {
      exchangeFinished(ctx);
    }
  }

  private void exchangeFinished(ChannelHandlerContext ctx) {
    if (!inFlight) {
      return;
    }
    inFlight = false;
    current = null;
    while (!held.isEmpty() && !upgraded && !closing && ctx.channel().isActive()) {
      if (inFlight && held.peek() instanceof HttpRequest) {
        break;
      }
      process(ctx, held.poll());
    }
    if (held.isEmpty() && pipelinePaused) {
      pipelinePaused = false;
      ReadGate.resume(ctx.channel(), ReadGate.PIPELINE);
    }
    if (!inFlight && !upgraded) {
      armHeadTimer(ctx);
    }
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    boolean ends = false;
    if (msg instanceof HttpResponse response) {
      int code = response.status().code();
      if (code == 101) {
        upgraded = true;
        stopHeadTimer();
        releaseHeld();
      } else if (code < 200) {
        interim = true;
      } else {
        interim = false;
        responseStarted = true;
      }
    }
    if (msg instanceof LastHttpContent && !upgraded) {
      if (interim) {
        interim = false;
      } else {
        ends = true;
      }
    }
    if (access != null) {
      promise = accessLogged(ctx, msg, ends, promise);
    }
    ctx.write(msg, promise);
    if (ends && inFlight) {
      if (held.isEmpty()) {
        // Nothing waits to be read, so nothing re-enters the handlers behind this write.
        responseFinished(ctx);
      } else {
        // Release the next pipelined request after this write call has returned.
        ctx.executor().execute(() -> responseFinished(ctx));
      }
    }
  }

  /**
   * Counts what goes out; at the exchange's end (or its upgrade) reads the facts at once, before
   * a pipelined request can replace them, and reports the entry when the write completed.
   */
  private ChannelPromise accessLogged(ChannelHandlerContext ctx, Object msg, boolean ends,
      ChannelPromise promise) {
    AccessRecord r = access;
    if (msg instanceof HttpResponse response && (response.status().code() >= 200 || upgraded)) {
      r.status(response.status().code());
    }
    r.counted(msg);
    if (!ends && !upgraded) {
      return promise;
    }
    access = null;
    AccessEntry entry = r.finish(ctx.channel());
    ChannelPromise p = promise.unvoid();
    p.addListener(done -> events.exchange(entry));
    return p;
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
      ctx.close();   // a WebSocket client that shut its output is gone (the relay half-closes)
      return;
    }
    if (evt instanceof IdleStateEvent) {
      if (upgraded) {
        // A WebSocket client is told why (1001), and the relay tells the upstream.
        Snapshot s = snapshot != null ? snapshot : snapshots.get();
        WebSockets.closeLingering(ctx.channel(), WebSockets.GOING_AWAY, "idle timeout",
            s.ws.closeTimeout());
      } else {
        ctx.close();
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  /** Arms the head timeout: the next request head must arrive within the handshake timeout. */
  private void armHeadTimer(ChannelHandlerContext ctx) {
    Snapshot s = snapshot != null ? snapshot : snapshots.get();
    long nanos = s.gateway.handshakeTimeout().toNanos();
    if (head == null) {
      head = new Deadline(ctx.executor(), () -> headTimeout(ctx));
    }
    if (nanos > 0) {
      head.arm(nanos);
    } else {
      head.disarm();
    }
  }

  private void headTimeout(ChannelHandlerContext ctx) {
    if (!inFlight && !upgraded && ctx.channel().isActive()) {
      ctx.close();
    }
  }

  private void cancelHeadTimer() {
    if (head != null) {
      head.disarm();
    }
  }

  private void stopHeadTimer() {
    if (head != null) {
      head.stop();
    }
  }

  private void releaseHeld() {
    Object o;
    while ((o = held.poll()) != null) {
      ReferenceCountUtil.release(o);
    }
  }

  /** HTTP/2 replaces this handler on its connection: its head timer must not close that. */
  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    stopHeadTimer();
    releaseHeld();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    stopHeadTimer();
    releaseHeld();
    ctx.fireChannelInactive();
  }
}
