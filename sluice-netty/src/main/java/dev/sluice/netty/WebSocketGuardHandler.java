package dev.sluice.netty;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.http.Json;
import dev.sluice.core.Lease;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Ticker;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Guards WebSocket connections (seeds 000 and 001). Place it after {@link HttpRateLimitHandler},
 * before whatever completes the handshake; the frames of the upgraded connection then pass it.
 *
 * <ul>
 *   <li>At the upgrade: concurrent connection caps per client address, per session token and for
 *       the shared bucket of unresolvable addresses. A full cap refuses the upgrade (429, or 1013
 *       after the handshake). The slots are leases, given back when the channel closes, abruptly
 *       too, and renewed while it is open.
 *   <li>Per message: a size cap over all fragments of a message and a cap on their number (both
 *       1009); a per-connection flood bucket (1008 "too many messages"); per-action limits read
 *       from a JSON field of text messages (a refused message is dropped and the client gets
 *       {@code {"error":"rate_limited","action":...,"retryAfterMs":...}}, plus {@code currentScore}
 *       and {@code maxScore} when a score refused); after {@code strikes} refusals within the
 *       strike window, 1008.
 *   <li>A client on the policy's {@code allow} list skips the connection caps, the flood bucket,
 *       the action limits and strikes; the size caps still hold (they protect the relay, not a
 *       quota).
 *   <li>Every close is a lingering close ({@link WebSockets#closeLingering}): the client receives
 *       the close frame even while it keeps sending.
 * </ul>
 *
 * <p>With a remote store nothing waits on the event loop: leases and action decisions are asked
 * for asynchronously, reads pause ({@link ReadGate#GUARD}) and later messages are held in order
 * until the answer is in. Settings come from the request's {@link Exchange} when one was begun.
 *
 * <p>The size cap here counts fragments; the frame decoder's {@code maxFramePayloadLength} must be
 * set to the same cap so that no single frame is buffered beyond it, and its
 * {@code closeOnProtocolViolation} to false so that this handler closes. One instance per channel.
 */
public class WebSocketGuardHandler extends ChannelDuplexHandler {

  private enum Phase { HTTP, UPGRADING, OPEN, CLOSING }

  private final RateLimiter limiter;
  private final Supplier<WebSocketGuardSettings> settings;
  private final Ticker ticker;
  private final RateLimitListener listener;

  private Phase phase = Phase.HTTP;
  private WebSocketGuardSettings s;
  private final HeldLeases leases = new HeldLeases();
  private Identity identity = Identity.empty();
  private MessageFloodBucket flood;
  private long messageBytes;
  private int fragments;
  private boolean dropping;
  private boolean discardingHttp;
  private Strikes strikes;
  /** The client is on the policy's allow list: no caps, flood bucket, action limits, strikes. */
  private boolean allowlisted;
  private int closeCode = -1;
  private final Backlog backlog = new Backlog(ReadGate.GUARD);
  private boolean closed;

  public WebSocketGuardHandler(RateLimiter limiter, Supplier<WebSocketGuardSettings> settings,
      Ticker ticker, RateLimitListener listener) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.listener = listener == null ? RateLimitListener.none() : listener;
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
    if (msg instanceof WebSocketFrame frame) {
      if (phase == Phase.OPEN) {
        onFrame(ctx, frame);
      } else if (phase == Phase.CLOSING) {
        frame.release();
      } else {
        ctx.fireChannelRead(msg);
      }
      return;
    }
    if (msg instanceof HttpRequest request) {
      discardingHttp = false;
      if (phase == Phase.HTTP && !request.decoderResult().isFailure()
          && Exchange.ofOrBegin(ctx.channel(), request).view().websocketUpgrade()) {
        onUpgrade(ctx, request);
        return;
      }
    } else if (discardingHttp && msg instanceof HttpContent) {
      if (msg instanceof LastHttpContent) {
        discardingHttp = false;
      }
      ReferenceCountUtil.release(msg);
      return;
    }
    ctx.fireChannelRead(msg);
  }

  private void onUpgrade(ChannelHandlerContext ctx, HttpRequest request) {
    Exchange exchange = Exchange.ofOrBegin(ctx.channel(), request);
    s = exchange.ws() != null ? exchange.ws() : settings.get();
    NettyRequestView view = exchange.view();
    allowlisted = !s.policy().allow().isEmpty()
        && s.policy().allow().contains(view.clientAddress(s.policy().clientAddress()));
    CompletableFuture<List<Lease>> leased = allowlisted
        ? CompletableFuture.completedFuture(List.of())
        : ConnectionCaps.acquire(limiter, s, view).toCompletableFuture();
    if (leased.isDone()) {
      upgrade(ctx, request, view, leased.getNow(null));
      return;
    }
    backlog.startWaiting(ctx.channel());
    leased.whenComplete((acquired, e) -> ctx.executor().execute(() -> {
      if (closed) {
        if (acquired != null) {
          acquired.forEach(Lease::close);
        }
        ReferenceCountUtil.release(request);
        return;
      }
      upgrade(ctx, request, view, acquired);
      backlog.stopWaiting(ctx.channel(), msg -> handle(ctx, msg));
    }));
  }

  /** Lets the upgrade through holding {@code acquired}, or refuses it when a cap was full (null). */
  private void upgrade(ChannelHandlerContext ctx, HttpRequest request, NettyRequestView view,
      List<Lease> acquired) {
    if (acquired == null) {
      discardingHttp = !(request instanceof LastHttpContent);
      ReferenceCountUtil.release(request);
      refuseConnection(ctx, request);
      return;
    }
    leases.hold(acquired);
    try {
      identity = s.policy().identify(view, s.actionRuleList());
    } catch (RuntimeException e) {
      identity = Identity.empty();
    }
    flood = s.floodPerSecond() > 0 && !allowlisted
        ? new MessageFloodBucket(s.floodBurst(), s.floodPerSecond())
        : null;
    strikes = s.strikes() > 0 && !allowlisted
        ? new Strikes(s.strikes(), s.strikeWindowNanos()) : null;
    phase = Phase.UPGRADING;
    ctx.fireChannelRead(request);
  }

  /** Answers an upgrade refused by a full connection cap. */
  protected void refuseConnection(ChannelHandlerContext ctx, HttpRequest request) {
    if (!s.refuseBeforeUpgrade()) {
      WebSockets.closeAfterHandshake(ctx.channel(), request, WebSockets.TRY_AGAIN_LATER,
          "try again later", listener);
      return;
    }
    FullHttpResponse response = Responses.json(request, HttpResponseStatus.TOO_MANY_REQUESTS,
        "{\"error\":\"too many connections\",\"retryAfter\":1}", null);
    response.headers().set(HttpHeaderNames.RETRY_AFTER, 1);
    listener.generated(429);
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    HttpUtil.setKeepAlive(response, keepAlive);
    ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
        : ChannelFutureListener.CLOSE);
  }

  private void onFrame(ChannelHandlerContext ctx, WebSocketFrame frame) {
    if (frame instanceof CloseWebSocketFrame close) {
      if (closeCode < 0) {
        closeCode = close.statusCode() < 0 ? 1005 : close.statusCode();
      }
      ctx.fireChannelRead(frame);
      return;
    }
    if (frame instanceof PongWebSocketFrame) {
      ctx.fireChannelRead(frame);
      return;
    }
    if (frame instanceof PingWebSocketFrame) {
      // A control frame may sit between the fragments of a message: it must not restart the
      // message's counts, or pings would reset the size and fragment caps.
      if (flood != null && !flood.tryAcquire(ticker.read())) {
        frame.release();
        close(ctx, WebSockets.POLICY_VIOLATION, "too many messages");
        return;
      }
      ctx.fireChannelRead(frame);
      return;
    }
    boolean first = !(frame instanceof ContinuationWebSocketFrame);
    int size = frame.content().readableBytes();
    if (first) {
      dropping = false;
      messageBytes = size;
      fragments = 1;
      if (flood != null && !flood.tryAcquire(ticker.read())) {
        frame.release();
        close(ctx, WebSockets.POLICY_VIOLATION, "too many messages");
        return;
      }
    } else {
      messageBytes += size;
      fragments++;
    }
    if (messageBytes > s.maxMessageBytes()) {
      frame.release();
      close(ctx, WebSockets.MESSAGE_TOO_BIG, "message too big");
      return;
    }
    if (fragments > s.maxFragments()) {
      frame.release();
      close(ctx, WebSockets.MESSAGE_TOO_BIG, "too many fragments");
      return;
    }
    if (!first && dropping) {
      frame.release();
      return;
    }
    if (first && frame instanceof TextWebSocketFrame text && s.actionField() != null
        && !s.actionRules().isEmpty() && !allowlisted) {
      checkAction(ctx, text);
      return;
    }
    ctx.fireChannelRead(frame);
  }

  /**
   * Checks the action of a text message: an allowed one goes on, a refused one is dropped and the
   * client told. With a remote store the later frames wait behind the decision, so messages keep
   * their order.
   */
  private void checkAction(ChannelHandlerContext ctx, TextWebSocketFrame frame) {
    String action = ActionField.read(frame.text(), s.actionField());
    Rule rule = action == null ? null : s.ruleFor(action);
    if (rule == null) {
      ctx.fireChannelRead(frame);
      return;
    }
    Identity who = identity.with("event", action);
    long start = System.nanoTime();
    if (limiter.store().isLocal()) {
      actionDecided(ctx, frame, action, rule, who, limiter.check(rule, who), start);
      return;
    }
    CompletableFuture<Decision> decision =
        limiter.checkAsync(List.of(rule), who, 1).toCompletableFuture();
    if (decision.isDone()) {
      actionDecided(ctx, frame, action, rule, who, decision.join(), start);
      return;
    }
    backlog.startWaiting(ctx.channel());
    decision.whenComplete((d, e) -> ctx.executor().execute(() -> {
      if (closed || phase != Phase.OPEN) {
        frame.release();
        return;
      }
      actionDecided(ctx, frame, action, rule, who,
          e != null ? Decision.failed(List.of(rule)) : d, start);
      backlog.stopWaiting(ctx.channel(), msg -> handle(ctx, msg));
    }));
  }

  private void actionDecided(ChannelHandlerContext ctx, TextWebSocketFrame frame, String action,
      Rule rule, Identity who, Decision d, long start) {
    listener.decision(RateLimitListener.WS_ACTION, List.of(rule), d, System.nanoTime() - start);
    if (d.banApplied()) {
      listener.banApplied(RateLimitListener.WS_ACTION, d, rule.keyText(who));
    }
    if (d.allowed()) {
      ctx.fireChannelRead(frame);
      return;
    }
    dropping = !frame.isFinalFragment();
    frame.release();
    ctx.writeAndFlush(new TextWebSocketFrame(actionRefusal(action, d)));
    if (strikes != null && strikes.strike(ticker.read())) {
      close(ctx, WebSockets.POLICY_VIOLATION, "too many refused messages");
    }
  }

  /** The message sent to a client whose action was refused. */
  protected String actionRefusal(String action, Decision decision) {
    StringBuilder sb = new StringBuilder(96).append("{\"error\":\"rate_limited\",\"action\":");
    Json.quote(sb, action);
    sb.append(",\"retryAfterMs\":").append(Math.max(0, decision.retryAfterMillis()));
    // Seed 003: present only when a score refused (the decision's score is NaN otherwise).
    if (!Double.isNaN(decision.currentScore())) {
      sb.append(",\"currentScore\":").append(Json.number(decision.currentScore()))
          .append(",\"maxScore\":").append(Json.number(decision.maxScore()));
    }
    return sb.append('}').toString();
  }

  /**
   * Closes with {@code code} so that the client reads it: a lingering close
   * ({@link WebSockets#closeLingering}) discards what the client sends on, instead of closing a
   * socket with unread input, which sends a reset that can destroy the close frame.
   */
  private void close(ChannelHandlerContext ctx, int code, String reason) {
    if (phase == Phase.CLOSING) {
      return;
    }
    phase = Phase.CLOSING;
    closeCode = code;
    WebSockets.closeLingering(ctx.channel(), code, reason, s.closeTimeout());
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof WebSockets.Closing closing && phase == Phase.OPEN) {
      // Someone else closes (an idle timeout, the relay): the frames stop here anyway.
      phase = Phase.CLOSING;
      if (closeCode < 0) {
        closeCode = closing.code();
      }
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    if (phase == Phase.UPGRADING && msg instanceof HttpResponse response) {
      int code = response.status().code();
      if (code == 101) {
        phase = Phase.OPEN;
        listener.webSocketOpened();
        leases.renewEvery(ctx.executor(),
            s.perIp() != null ? s.perIp().leaseTtl().toMillis() : 120_000);
      } else if (code >= 200) {
        leases.release();
        phase = Phase.HTTP;
      }
    } else if (msg instanceof CloseWebSocketFrame close && closeCode < 0) {
      closeCode = close.statusCode() < 0 ? 1005 : close.statusCode();
    }
    ctx.write(msg, promise);
  }

  /**
   * A frame the decoder refused (too large, malformed): the client gets the decoder's close code
   * in a lingering close, which needs the decoder built with {@code closeOnProtocolViolation(false)}.
   */
  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    Throwable t = cause;
    for (int i = 0; i < 4 && t != null; i++, t = t.getCause()) {
      if (t instanceof CorruptedWebSocketFrameException corrupt) {
        if (phase == Phase.CLOSING) {
          return;
        }
        if (phase == Phase.OPEN && ctx.channel().isActive()) {
          int code = corrupt.closeStatus().code();
          close(ctx, code, code == WebSockets.MESSAGE_TOO_BIG ? "message too big"
              : corrupt.closeStatus().reasonText());
          return;
        }
        if (closeCode < 0) {
          closeCode = corrupt.closeStatus().code();
        }
        break;
      }
    }
    ctx.fireExceptionCaught(cause);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    closed = true;
    backlog.discard();
    leases.release();
    if (phase == Phase.OPEN || phase == Phase.CLOSING) {
      listener.webSocketClosed(closeCode < 0 ? 1006 : closeCode);
    }
    phase = Phase.CLOSING;
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    closed = true;
    backlog.discard();
    leases.release();
  }
}
