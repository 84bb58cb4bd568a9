package dev.sluice.netty;

import dev.sluice.core.policy.Check;
import dev.sluice.core.Decision;
import dev.sluice.core.RateLimiter;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
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
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Objects;
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
 *   <li>Refused WebSocket upgrade: 429 as above, or (the default) the upgrade is completed and the
 *       socket closed at once with 1013 "try again later".
 *   <li>Shadow refusals are allowed; they are reported through the listener's decision.
 * </ul>
 *
 * <p>The decision of the current request is also left in the channel attribute {@link #DECISION}
 * for handlers further on. One instance per channel.
 */
public class HttpRateLimitHandler extends ChannelDuplexHandler {

  /** The decision of the latest request on the channel; null when exempt or unlimited. */
  public static final AttributeKey<Decision> DECISION = AttributeKey.valueOf("sluice.decision");

  private static final Object NO_HEADERS = new Object();
  private static final System.Logger LOG = System.getLogger(HttpRateLimitHandler.class.getName());

  private final RateLimiter limiter;
  private final Supplier<HttpRateLimitSettings> settings;
  private final RateLimitListener listener;
  private final ArrayDeque<Object> pending = new ArrayDeque<>(2);
  private boolean discarding;

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
    ctx.fireChannelRead(msg);
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
    HttpRateLimitSettings s = settings.get();
    NettyRequestView view = NettyRequestView.of(request, ctx.channel().remoteAddress());
    Decision decision;
    Check check = null;
    try {
      check = s.selector().apply(view);
      decision = check == null || check.exempt() ? null : check.apply(limiter);
    } catch (RuntimeException e) {
      // A broken policy must not take the service down with it: let the request through.
      LOG.log(System.Logger.Level.WARNING, "rate limit check failed; request let through", e);
      decision = null;
    }
    ctx.channel().attr(DECISION).set(decision);
    boolean upgrade = view.websocketUpgrade();
    if (decision != null && decision.rule() != null) {
      String kind = upgrade ? RateLimitListener.WS_CONNECT : RateLimitListener.HTTP;
      listener.decision(kind, decision);
      if (decision.banApplied()) {
        listener.banApplied(kind, decision, keyOf(check.rules(), decision, check.identity()));
      }
    }
    if (decision == null || decision.allowed()) {
      pending.add(decision == null || decision.rule() == null ? NO_HEADERS
          : new Pending(decision, s));
      ctx.fireChannelRead(request);
      return;
    }
    discarding = !(request instanceof LastHttpContent);
    ReferenceCountUtil.release(request);
    if (upgrade && !s.refuseWebSocketBeforeUpgrade()) {
      refuseUpgrade(ctx, request, decision);
      return;
    }
    FullHttpResponse response = rejectResponse(request, decision, s);
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

  /** The store key of the rule that decided, for the ban log. */
  static String keyOf(java.util.List<dev.sluice.core.Rule> rules, Decision decision,
      dev.sluice.core.Identity identity) {
    for (dev.sluice.core.Rule rule : rules) {
      if (rule.name().equals(decision.rule())) {
        return rule.keyFor(identity);
      }
    }
    return null;
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
   * The 429 for a refused request. Override to change the body; keep {@code Retry-After}.
   */
  protected FullHttpResponse rejectResponse(HttpRequest request, Decision decision,
      HttpRateLimitSettings settings) {
    FullHttpResponse response;
    if (Responses.prefersHtml(request.headers().getAll(HttpHeaderNames.ACCEPT))) {
      response = Responses.body(request, HttpResponseStatus.TOO_MANY_REQUESTS,
          Responses.refusalHtml(decision, settings.htmlTemplate()), "text/html; charset=utf-8",
          settings.cors());
    } else {
      response = Responses.json(request, HttpResponseStatus.TOO_MANY_REQUESTS,
          Responses.refusalJson(decision), settings.cors());
    }
    response.headers().set(HttpHeaderNames.RETRY_AFTER, decision.retryAfterSeconds());
    addLimitHeaders(response, decision, settings);
    return response;
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
      if (p instanceof Pending limited) {
        addLimitHeaders(response, limited.decision, limited.settings);
      }
    }
    ctx.write(msg, promise);
  }

  private static boolean isInterim(HttpResponse response) {
    int code = response.status().code();
    return code >= 100 && code < 200 && code != 101;
  }

  private record Pending(Decision decision, HttpRateLimitSettings settings) {}
}
