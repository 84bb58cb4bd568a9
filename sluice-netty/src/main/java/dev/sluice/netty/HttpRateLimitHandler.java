package dev.sluice.netty;

import dev.sluice.core.Decision;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.policy.Admission;
import dev.sluice.core.policy.Admission.Outcome;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Rate-limits HTTP requests; place it after {@code HttpServerCodec}. For each request it asks the
 * settings' selector (usually {@code Policy::select}) which rules apply and checks them.
 *
 * <ul>
 *   <li>Allowed: the request goes on, and the response that comes back through this handler gets
 *       the limit headers ({@code X-RateLimit-*}, {@code RateLimit-Policy}, {@code RateLimit}).
 *   <li>Refused: answered here with 429, {@code Retry-After} (whole seconds, rounded up, at least
 *       1), {@code Cache-Control: no-store}, the limit headers, CORS headers, and a JSON or HTML
 *       body chosen by {@code Accept}. The request's body that follows is read and released, so
 *       the connection stays usable.
 *   <li>Refused by a fail-closed rule because the store cannot answer: 503 (configurable) with
 *       {@code {"error":"rate limiter unavailable","retryAfter":n}} or a page, so an outage of
 *       the limiter is not mistaken for a limit.
 *   <li>Refused WebSocket upgrade: 429 as above, or (the default) the upgrade is completed and the
 *       socket closed at once with 1013 "try again later".
 *   <li>Shadow refusals are allowed; they are reported through the listener's decision, and a
 *       shadow rule adds no limit headers.
 *   <li>Refused by a rule with a {@code delay} when the token is due within it: the request
 *       waits on a timer of the channel's event loop (reads paused, nothing blocked) and is
 *       decided again when the token is due; see {@link Admission}.
 *   <li>Allow-listed clients ({@link dev.sluice.core.policy.Check#allowlisted()}) pass unchecked and are reported.
 *   <li>CORS preflights pass unchecked unless the settings limit them.
 *   <li>A check that throws is a bug: it is reported to the listener and the rules' {@code
 *       OnStoreError} decides, as for a store that cannot answer.
 *   <li>Denied (the policy's deny list, a failed or replayed human check): 403, never forwarded.
 *   <li>A route with a human check: its token is read from a header, or from the body, which is
 *       gathered (up to the check's {@code maxBodyBytes}, else 413) and forwarded whole once
 *       the token passed ({@link Admission#verify}); reads pause while the verifier is asked.
 *   <li>Rules counted on responses are told each response's status as it goes out
 *       ({@link Outcome#responded}); concurrency leases go back when the response's last part
 *       is written, or when the stream or connection closes (a WebSocket's at its close).
 * </ul>
 *
 * <p>What to do with a request is core's one admission step ({@link Admission}), the same the
 * gateway's byte relay and the servlet filter call: this handler reads the request for it and
 * writes what it says.
 *
 * <p>With a remote store (Redis) the event loop never waits: the decision is asked for
 * asynchronously, reads pause ({@link ReadGate#LIMIT}) and what was already read is held until it
 * arrives, then the request goes on or is answered on the channel's own loop. With the in-memory
 * store the decision is made inline, with nothing paused or allocated for it.
 *
 * <p>The request's settings and facts come from its {@link Exchange} when an earlier handler began
 * one (pinned at the request's head), otherwise from the settings supplier. The decision of the
 * current request is also left in the channel attribute {@link #DECISION} for handlers further
 * on. One instance per channel.
 */
public class HttpRateLimitHandler extends ChannelDuplexHandler {

  /** The decision of the latest request on the channel; null when exempt or unlimited. */
  public static final AttributeKey<Decision> DECISION = AttributeKey.valueOf("sluice.decision");

  private final RateLimiter limiter;
  private final Supplier<HttpRateLimitSettings> settings;
  private final RateLimitListener listener;
  private final ArrayDeque<Object> pending = new ArrayDeque<>(2);
  private final Backlog backlog = new Backlog(ReadGate.LIMIT);
  private boolean discarding;
  private boolean closed;
  /** The admission of the settings last read, rebuilt when they change. */
  private HttpRateLimitSettings admitted;
  private Admission admission;
  /** The request waiting (for its token, or for a remote store), if any: one at most. */
  private Outcome waiting;
  private HttpRequest waitingRequest;
  private ScheduledFuture<?> timer;
  /** Forwarded requests whose responses are owed to their outcomes, in order (null: none). */
  private final ArrayDeque<Outcome> owed = new ArrayDeque<>(2);
  /** The outcome whose response is being written, until its last part. */
  private Outcome responding;
  /** An upgraded WebSocket's outcome: its leases last as long as the connection. */
  private Outcome upgraded;
  /** A human-checked request whose body is gathered for its token. */
  private HttpRequest gathering;
  private Outcome gatheringOutcome;
  private HttpRateLimitSettings gatheringSettings;
  private io.netty.buffer.CompositeByteBuf gathered;
  /** The gathered body that goes on with the request once verified. */
  private io.netty.buffer.ByteBuf verifiedBody;

  public HttpRateLimitHandler(RateLimiter limiter, Supplier<HttpRateLimitSettings> settings,
      RateLimitListener listener) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.listener = listener == null ? RateLimitListener.none() : listener;
  }

  public HttpRateLimitHandler(RateLimiter limiter, HttpRateLimitSettings settings) {
    this(limiter, () -> settings, RateLimitListener.none());
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (backlog.waiting()) {
      backlog.hold(msg);
      return;
    }
    handle(ctx, msg);
  }

  private void handle(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest request) {
      discarding = false;
      if (request.decoderResult().isFailure()) {
        ctx.fireChannelRead(msg);
        return;
      }
      onRequest(ctx, request);
      return;
    }
    if (discarding && msg instanceof HttpContent) {
      if (msg instanceof LastHttpContent) {
        discarding = false;
      }
      ReferenceCountUtil.release(msg);
      return;
    }
    if (gathering != null && msg instanceof HttpContent content) {
      gather(ctx, content);
      return;
    }
    ctx.fireChannelRead(msg);
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
    Exchange exchange = Exchange.ofOrBegin(ctx.channel(), request);
    HttpRateLimitSettings s = exchange.http() != null ? exchange.http() : settings.get();
    NettyRequestView view = exchange.view();
    String kind = view.websocketUpgrade() ? RateLimitListener.WS_CONNECT : RateLimitListener.HTTP;
    Outcome o = admission(s).admit(view, kind);
    exchange.route(o.route());
    apply(ctx, request, s, o);
  }

  private Admission admission(HttpRateLimitSettings s) {
    if (s != admitted) {
      Admission.Builder b = Admission.builder().limiter(limiter);
      if (s.policy() != null) {
        b.policy(s.policy());   // its challenges too
      } else {
        b.selector(s.selector());
      }
      admission = b.responses(s.responses()).listener(listener).delays(s.delays())
          .verifier(s.verifier()).build();
      admitted = s;
    }
    return admission;
  }

  /** Does what the admission step said; waits (reads paused, later messages held) when told. */
  private void apply(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      Outcome o) {
    switch (o.action()) {
      case PENDING -> {
        wait(ctx, request, o);
        o.stage().whenComplete((done, e) -> ctx.executor().execute(() -> resume(ctx, s, done)));
      }
      case DELAY -> {
        wait(ctx, request, o);
        Admission a = admission;
        timer = ctx.executor().schedule(() -> resume(ctx, s, a.redecide(o)), o.delayNanos(),
            TimeUnit.NANOSECONDS);
      }
      case FORWARD -> {
        ctx.channel().attr(DECISION).set(o.decision());
        pending.add(o.limitHeaders() ? new RateLimitAnswers.Pending(o.decision(), s)
            : RateLimitAnswers.NO_HEADERS);
        owed.add(o);
        ctx.fireChannelRead(request);
        io.netty.buffer.ByteBuf body = verifiedBody;
        if (body != null) {
          verifiedBody = null;
          ctx.fireChannelRead(new io.netty.handler.codec.http.DefaultLastHttpContent(body));
        }
      }
      case VERIFY -> verify(ctx, request, s, o);
      case DENY -> deny(ctx, request, s, o);
      case CHALLENGE -> challenge(ctx, request, o);
      default -> refuse(ctx, request, s, o);
    }
  }

  /** A human check: the token from a header at once, or from the body once it is whole. */
  private void verify(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      Outcome o) {
    dev.sluice.core.policy.HumanCheck h = o.humanCheck();
    if (h.from() == dev.sluice.core.policy.HumanCheck.TokenFrom.HEADER) {
      apply(ctx, request, s, admission.verify(o, h.token(Exchange.ofOrBegin(ctx.channel(),
          request).view())));
      return;
    }
    if (request instanceof io.netty.handler.codec.http.FullHttpRequest full) {
      io.netty.buffer.ByteBuf body = full.content();
      if (body.readableBytes() > h.maxBodyBytes()) {
        tooLarge(ctx, request, s, o);
        return;
      }
      verifiedBody = body.retainedDuplicate();
      HttpRequest head = new io.netty.handler.codec.http.DefaultHttpRequest(
          request.protocolVersion(), request.method(), request.uri(), request.headers());
      String text = body.toString(java.nio.charset.StandardCharsets.UTF_8);
      ReferenceCountUtil.release(request);
      apply(ctx, head, s, admission.verify(o, h.token(text)));
      return;
    }
    gathering = request;
    gatheringOutcome = o;
    gatheringSettings = s;
    gathered = ctx.alloc().compositeBuffer(1024);
    if (HttpUtil.is100ContinueExpected(request)) {
      ctx.writeAndFlush(new io.netty.handler.codec.http.DefaultFullHttpResponse(
          request.protocolVersion(), io.netty.handler.codec.http.HttpResponseStatus.CONTINUE));
    }
  }

  private void gather(ChannelHandlerContext ctx, HttpContent content) {
    dev.sluice.core.policy.HumanCheck h = gatheringOutcome.humanCheck();
    if (gathered.readableBytes() + content.content().readableBytes() > h.maxBodyBytes()) {
      content.release();
      HttpRequest request = gathering;
      Outcome o = gatheringOutcome;
      HttpRateLimitSettings s = gatheringSettings;
      endGathering();
      discarding = !(content instanceof LastHttpContent);
      tooLarge(ctx, request, s, o);
      return;
    }
    gathered.addComponent(true, content.content().retain());
    boolean last = content instanceof LastHttpContent;
    content.release();
    if (!last) {
      return;
    }
    HttpRequest request = gathering;
    Outcome o = gatheringOutcome;
    HttpRateLimitSettings s = gatheringSettings;
    String text = gathered.toString(java.nio.charset.StandardCharsets.UTF_8);
    verifiedBody = gathered;
    gathered = null;
    endGathering();
    apply(ctx, request, s, admission.verify(o, h.token(text)));
  }

  private void endGathering() {
    gathering = null;
    gatheringOutcome = null;
    gatheringSettings = null;
    if (gathered != null) {
      gathered.release();
      gathered = null;
    }
  }

  /** A gathered body past the human check's cap: 413, and the connection closes. */
  private void tooLarge(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      Outcome o) {
    o.cancel();
    FullHttpResponse response = Responses.json(request,
        io.netty.handler.codec.http.HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
        "{\"error\":\"payload too large\",\"detail\":\"a human-checked request's body may be at "
            + "most " + o.humanCheck().maxBodyBytes() + " bytes\"}", s.cors());
    listener.generated(413);
    HttpUtil.setKeepAlive(response, false);
    ReferenceCountUtil.release(request);
    ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
  }

  /** Answers a denied request: 403, before any upgrade; never forwarded. */
  private void deny(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      Outcome o) {
    releaseVerifiedBody();
    discarding = !(request instanceof LastHttpContent);
    boolean html = dev.sluice.core.http.Accept.prefersHtml(
        request.headers().getAll(io.netty.handler.codec.http.HttpHeaderNames.ACCEPT));
    FullHttpResponse response = Responses.body(request,
        io.netty.handler.codec.http.HttpResponseStatus.FORBIDDEN,
        dev.sluice.core.http.Bodies.denied(o.denial(), html),
        html ? dev.sluice.core.http.Bodies.HTML : dev.sluice.core.http.Bodies.JSON, s.cors());
    ReferenceCountUtil.release(request);
    listener.generated(403);
    boolean keepAlive = HttpUtil.isKeepAlive(request) && !HttpUtil.is100ContinueExpected(request)
        && !o.kind().equals(RateLimitListener.WS_CONNECT);
    HttpUtil.setKeepAlive(response, keepAlive);
    ChannelFuture f = ctx.writeAndFlush(response);
    if (!keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE);
    }
  }

  /** Writes the challenge's answer (its page, or its verdict) as it is. */
  private void challenge(ChannelHandlerContext ctx, HttpRequest request, Outcome o) {
    ctx.channel().attr(DECISION).set(o.decision());
    discarding = !(request instanceof LastHttpContent);
    ReferenceCountUtil.release(request);
    dev.sluice.core.http.Answer a = o.answer();
    FullHttpResponse response = new io.netty.handler.codec.http.DefaultFullHttpResponse(
        request.protocolVersion(), io.netty.handler.codec.http.HttpResponseStatus.valueOf(
            a.status()), io.netty.buffer.Unpooled.wrappedBuffer(a.body()));
    a.fields(new NettyHeaders(response.headers()));
    response.headers().set(io.netty.handler.codec.http.HttpHeaderNames.CONTENT_LENGTH,
        a.bodyLength());
    listener.generated(a.status());
    boolean keepAlive = HttpUtil.isKeepAlive(request) && !HttpUtil.is100ContinueExpected(request);
    HttpUtil.setKeepAlive(response, keepAlive);
    ChannelFuture f = ctx.writeAndFlush(response);
    if (!keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE);
    }
  }

  private void releaseVerifiedBody() {
    if (verifiedBody != null) {
      verifiedBody.release();
      verifiedBody = null;
    }
  }

  private void wait(ChannelHandlerContext ctx, HttpRequest request, Outcome o) {
    waiting = o;
    waitingRequest = request;
    backlog.startWaiting(ctx.channel());
  }

  /** The wait is over: apply its outcome, then what arrived meanwhile. */
  private void resume(ChannelHandlerContext ctx, HttpRateLimitSettings s, Outcome o) {
    HttpRequest request = waitingRequest;
    waiting = null;
    waitingRequest = null;
    timer = null;
    if (closed) {
      o.cancel();
      ReferenceCountUtil.release(request);
      return;
    }
    backlog.done();
    apply(ctx, request, s, o);
    backlog.drain(ctx.channel(), msg -> handle(ctx, msg));
  }

  /** Answers a refused request: 429, 503, or for a WebSocket the upgrade closed with 1013. */
  private void refuse(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      Outcome o) {
    Decision decision = o.decision();
    ctx.channel().attr(DECISION).set(decision);
    releaseVerifiedBody();
    discarding = !(request instanceof LastHttpContent);
    ReferenceCountUtil.release(request);
    if (o.kind().equals(RateLimitListener.WS_CONNECT) && !s.refuseWebSocketBeforeUpgrade()) {
      refuseUpgrade(ctx, request, decision);
      return;
    }
    FullHttpResponse response = decision.degraded()
        ? unavailableResponse(request, decision, s)
        : o.responses() != s.responses() && o.responses().namesChallenge()
            ? RateLimitAnswers.refusal(request, decision, o.responses(), s.cors())
            : rejectResponse(request, decision, s);
    listener.generated(response.status().code());
    // A refused "Expect: 100-continue" request may or may not send its body; only closing
    // keeps the next request from being read as that body.
    boolean keepAlive = HttpUtil.isKeepAlive(request) && !HttpUtil.is100ContinueExpected(request);
    HttpUtil.setKeepAlive(response, keepAlive);
    ChannelFuture f = ctx.writeAndFlush(response);
    if (!keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    stop();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    stop();
  }

  /** The channel is gone: a waiting request gives its slot back now, not at its due time. */
  private void stop() {
    closed = true;
    endGathering();
    releaseVerifiedBody();
    if (gatheringOutcome != null) {
      gatheringOutcome.cancel();
    }
    if (responding != null) {
      responding.ended();
      responding = null;
    }
    if (upgraded != null) {
      upgraded.ended();
      upgraded = null;
    }
    Outcome o;
    while ((o = owed.poll()) != null) {
      o.ended();
    }
    if (timer != null && timer.cancel(false)) {
      waiting.cancel();
      ReferenceCountUtil.release(waitingRequest);
      waiting = null;
      waitingRequest = null;
    }
    timer = null;
    backlog.discard();
  }

  /**
   * Answers a WebSocket upgrade that {@code decision} refused when the settings want it closed
   * after the upgrade; by default completes the handshake and closes with 1013.
   */
  protected void refuseUpgrade(ChannelHandlerContext ctx, HttpRequest request, Decision decision) {
    WebSockets.closeAfterHandshake(ctx.channel(), request, WebSockets.TRY_AGAIN_LATER,
        "try again later", listener);
  }

  /**
   * The answer to a fail-closed refusal while the store cannot answer ({@code decision.degraded()}):
   * 503 by default, with {@code {"error":"rate limiter unavailable","retryAfter":n}} or a page,
   * and no limit headers (nothing was counted). Override to change the body; keep
   * {@code Retry-After}.
   */
  protected FullHttpResponse unavailableResponse(HttpRequest request, Decision decision,
      HttpRateLimitSettings settings) {
    return RateLimitAnswers.refusal(request, decision, settings);
  }

  /**
   * The 429 for a refused request. Override to change the body; keep {@code Retry-After}.
   */
  protected FullHttpResponse rejectResponse(HttpRequest request, Decision decision,
      HttpRateLimitSettings settings) {
    return RateLimitAnswers.refusal(request, decision, settings);
  }

  /** Adds the limit headers of {@code decision} to {@code response}. */
  protected void addLimitHeaders(HttpResponse response, Decision decision,
      HttpRateLimitSettings settings) {
    LimitHeaders.add(response.headers(), decision, settings.rateLimitHeaders(),
        settings.ietfHeaders());
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    if (msg instanceof HttpResponse response && !isInterim(response)) {
      Object p = pending.poll();
      if (p instanceof RateLimitAnswers.Pending limited) {
        addLimitHeaders(response, limited.decision(), limited.settings());
      }
      Outcome o = owed.poll();
      if (o != null) {
        int code = response.status().code();
        o.responded(code);
        if (code == 101) {
          upgraded = o;   // a WebSocket: its leases go back when the connection closes
        } else {
          responding = o;
        }
      }
    }
    ctx.write(msg, promise);
    if (msg instanceof LastHttpContent && responding != null) {
      responding.ended();
      responding = null;
    }
  }

  private static boolean isInterim(HttpResponse response) {
    int code = response.status().code();
    return code >= 100 && code < 200 && code != 101;
  }

}
