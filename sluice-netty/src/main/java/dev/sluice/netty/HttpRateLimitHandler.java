package dev.sluice.netty;

import dev.sluice.core.Decision;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Check;
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
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
 *       decided again when the token is due; see {@link #delay}.
 *   <li>Allow-listed clients ({@link Check#allowlisted()}) pass unchecked and are reported.
 *   <li>CORS preflights pass unchecked unless the settings limit them.
 *   <li>A check that throws is a bug: it is reported to the listener and the rules' {@code
 *       OnStoreError} decides, as for a store that cannot answer.
 * </ul>
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

  /**
   * A decision already made for the channel's next request by a handler in front of this one
   * (the gateway's byte relay, which hands refused requests here to be answered or delayed).
   * Taken once, instead of asking the limiter, when that request selects limits.
   */
  public static final AttributeKey<Decision> PRESET = AttributeKey.valueOf("sluice.preset");

  /**
   * Like {@link #PRESET}, a decision that failed: the next request is reported and decided as
   * if its own decision had thrown this (each rule's onStoreError), without asking the limiter.
   */
  public static final AttributeKey<Throwable> PRESET_FAILURE =
      AttributeKey.valueOf("sluice.presetFailure");

  /** The shortest wait, so that a refusal due "now" cannot spin the event loop. */
  private static final long MIN_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final RateLimiter limiter;
  private final Supplier<HttpRateLimitSettings> settings;
  private final RateLimitListener listener;
  private final ArrayDeque<Object> pending = new ArrayDeque<>(2);
  private final Backlog backlog = new Backlog(ReadGate.LIMIT);
  private boolean discarding;
  private boolean closed;
  /** The request waiting for its token, if any: one at most, as reads pause while it waits. */
  private Delayed delayed;

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
    ctx.fireChannelRead(msg);
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
    Exchange exchange = Exchange.ofOrBegin(ctx.channel(), request);
    Decision preset = ctx.channel().hasAttr(PRESET) ? ctx.channel().attr(PRESET).getAndSet(null)
        : null;
    Throwable presetFailure = ctx.channel().hasAttr(PRESET_FAILURE)
        ? ctx.channel().attr(PRESET_FAILURE).getAndSet(null) : null;
    HttpRateLimitSettings s = exchange.http() != null ? exchange.http() : settings.get();
    if (!s.limitPreflights() && RateLimitAnswers.isPreflight(request)) {
      ctx.channel().attr(DECISION).set(null);
      pending.add(RateLimitAnswers.NO_HEADERS);
      ctx.fireChannelRead(request);
      return;
    }
    NettyRequestView view = exchange.view();
    String kind = view.websocketUpgrade() ? RateLimitListener.WS_CONNECT : RateLimitListener.HTTP;
    Check check = null;
    try {
      check = s.selector().apply(view);
      exchange.route(check == null ? null : check.route());
      if (check == null || check.exempt()) {
        if (check != null && check.allowlisted()) {
          listener.allowlisted(kind);
        }
        decided(ctx, request, s, kind, check, null);
      } else if (presetFailure != null) {
        failed(ctx, request, s, kind, check, presetFailure);
      } else if (preset != null) {
        decided(ctx, request, s, kind, check, preset);
      } else if (limiter.store().isLocal()) {
        decided(ctx, request, s, kind, check, check.apply(limiter));
      } else {
        await(ctx, request, s, kind, check, check.applyAsync(limiter).toCompletableFuture());
      }
    } catch (RuntimeException e) {
      failed(ctx, request, s, kind, check, e);
    }
  }

  /**
   * Writes the limit headers an allowed response of {@code check} gets for {@code decision}, as
   * this handler adds them: none when no rule decided, for a shadow rule, or when the settings
   * turn both header families off. For handlers that write responses as bytes.
   */
  public static void writeLimitHeaders(Decision decision, Check check, HttpRateLimitSettings s,
      dev.sluice.core.http.Headers out) {
    if (RateLimitAnswers.headersFor(decision, check, s) instanceof RateLimitAnswers.Pending) {
      dev.sluice.core.http.LimitHeaders.write(decision, s.rateLimitHeaders(), s.ietfHeaders(),
          out);
    }
  }

  /**
   * Waits for a remote store without blocking the event loop: reads pause, later messages are
   * held, and the decision is applied on the channel's own loop when it arrives. A channel that
   * closed meanwhile drops it.
   */
  private void await(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      String kind, Check check, CompletableFuture<Decision> decision) {
    if (decision.isDone()) {
      decided(ctx, request, s, kind, check, decision.join());
      return;
    }
    backlog.startWaiting(ctx.channel());
    decision.whenComplete((d, e) -> ctx.executor().execute(() -> {
      if (closed) {
        ReferenceCountUtil.release(request);
        return;
      }
      backlog.done();
      if (e != null) {
        failed(ctx, request, s, kind, check, e);
      } else {
        decided(ctx, request, s, kind, check, d);
      }
      backlog.drain(ctx.channel(), msg -> handle(ctx, msg));
    }));
  }

  /**
   * Makes a refused request wait for its token when the refusing rule has a {@code delay}, the
   * token is due within what is left of it, and the rule's key and the server have a waiting
   * slot free; true when it now waits. At the due time the whole check runs again (the store
   * cannot reserve a future token: a refused check consumes nothing), and a request that loses
   * the token to another waits again within its budget, or is refused. docs/SEMANTICS.md has
   * the worked numbers.
   */
  private boolean delay(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      String kind, Check check, Decision decision) {
    Rule rule = RateLimitAnswers.ruleNamed(check.rules(), decision.rule());
    if (rule == null || rule.delayNanos() == 0 || closed) {
      return false;
    }
    long wait = Math.max(decision.retryAfterNanos(), MIN_WAIT_NANOS);
    Delayed d = delayed;
    if (d == null) {
      if (wait > rule.delayNanos()) {
        return false;
      }
      String key = rule.name() + '\n' + rule.keyFor(check.identity());
      if (!s.delays().tryAcquire(key, rule.delayQueue())) {
        return false;
      }
      d = new Delayed(s.delays(), key, request, rule.delayNanos());
      delayed = d;
      listener.delayed(kind, rule.name());
    }
    if (!d.spend(wait)) {
      return false;
    }
    backlog.startWaiting(ctx.channel());
    d.timer = ctx.executor().schedule(() -> redecide(ctx, request, s, kind, check), wait,
        TimeUnit.NANOSECONDS);
    return true;
  }

  /** The token of a waiting request is due: decide again. */
  private void redecide(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      String kind, Check check) {
    if (closed) {
      return;
    }
    backlog.done();
    try {
      if (limiter.store().isLocal()) {
        decided(ctx, request, s, kind, check, check.apply(limiter));
      } else {
        await(ctx, request, s, kind, check, check.applyAsync(limiter).toCompletableFuture());
      }
    } catch (RuntimeException e) {
      failed(ctx, request, s, kind, check, e);
    }
    backlog.drain(ctx.channel(), msg -> handle(ctx, msg));
  }

  /** Ends a wait: its slot goes back to the gate. */
  private void endDelay() {
    Delayed d = delayed;
    if (d != null) {
      delayed = null;
      d.release();
    }
  }

  /** The channel closed: a waiting request gives its slot back now, not at its due time. */
  private void cancelDelay() {
    Delayed d = delayed;
    if (d != null) {
      delayed = null;
      d.release();
      if (d.timer != null && d.timer.cancel(false)) {
        ReferenceCountUtil.release(d.request);
      }
    }
  }

  /** A bug, not a limit: the rules' onStoreError decides, as for a store that cannot answer. */
  private void failed(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      String kind, Check check, Throwable e) {
    List<Rule> rules = check == null ? List.of() : check.rules();
    listener.decisionFailed(kind, rules, e);
    apply(ctx, request, s, kind, check, rules.isEmpty() ? null : Decision.failed(rules));
  }

  private void decided(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      String kind, Check check, Decision decision) {
    if (decision != null && !decision.allowed() && !decision.degraded()
        && delay(ctx, request, s, kind, check, decision)) {
      return;
    }
    if (decision != null) {
      report(kind, check, decision);
    }
    apply(ctx, request, s, kind, check, decision);
  }

  /** Forwards an allowed request, answers a refused one. */
  private void apply(ChannelHandlerContext ctx, HttpRequest request, HttpRateLimitSettings s,
      String kind, Check check, Decision decision) {
    endDelay();
    ctx.channel().attr(DECISION).set(decision);
    if (decision == null || decision.allowed()) {
      pending.add(RateLimitAnswers.headersFor(decision, check, s));
      ctx.fireChannelRead(request);
      return;
    }
    discarding = !(request instanceof LastHttpContent);
    ReferenceCountUtil.release(request);
    if (kind.equals(RateLimitListener.WS_CONNECT) && !s.refuseWebSocketBeforeUpgrade()) {
      refuseUpgrade(ctx, request, decision);
      return;
    }
    FullHttpResponse response = decision.degraded()
        ? unavailableResponse(request, decision, s) : rejectResponse(request, decision, s);
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
    closed = true;
    cancelDelay();
    backlog.discard();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    closed = true;
    cancelDelay();
    backlog.discard();
  }

  private void report(String kind, Check check, Decision decision) {
    if (decision.rule() == null) {
      return;
    }
    listener.decision(kind, check.rules(), decision);
    if (decision.banApplied()) {
      Rule rule = RateLimitAnswers.ruleNamed(check.rules(), decision.rule());
      listener.banApplied(kind, decision, rule == null ? null : rule.keyText(check.identity()));
    }
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
    }
    ctx.write(msg, promise);
  }

  private static boolean isInterim(HttpResponse response) {
    int code = response.status().code();
    return code >= 100 && code < 200 && code != 101;
  }

}
