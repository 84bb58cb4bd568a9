package dev.sluice.gateway;

import dev.sluice.core.policy.Check;
import dev.sluice.moderation.Ruling;
import dev.sluice.moderation.Surface;
import dev.sluice.netty.NettyRequestView;
import dev.sluice.policy.ModerationSettings;
import io.netty.buffer.ByteBufHolder;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks the configured JSON fields of requests and WebSocket messages with the policy's
 * moderator ({@code moderation:}), between the limiter and the proxy.
 *
 * <ul>
 *   <li>HTTP: on a moderated route the request is held until its body is complete (the front
 *       handler caps the body), then either passed on whole or answered with 422
 *       {@code {"error":"rejected","field":"username","reason":"blocked_term"}}. A request that
 *       expects {@code 100 Continue} gets it from here, since nothing reaches the upstream
 *       before the body is checked.
 *   <li>WebSocket: a text message (its fragments gathered, up to the frame cap) with a refused
 *       field is not forwarded; the client gets
 *       {@code {"error":"rejected","action":"SET_NAME","field":"name","reason":"blocked_term"}},
 *       like the limiter's refusal. Control and binary frames pass untouched.
 *   <li>Every checked field is reported to {@link GatewayEvents#moderated} by surface and reason.
 * </ul>
 *
 * <p>Routes that are not moderated, and every message when the section is absent, pass through
 * unread. One instance per channel; all on its event loop, no waiting: a check costs
 * microseconds.
 */
final class ModerationHandler extends ChannelInboundHandlerAdapter {

  private final Snapshot.Source snapshots;
  private final GatewayEvents events;

  /** The held request and its contents, when a moderated request's body is being gathered. */
  private final List<Object> held = new ArrayList<>();
  private Map<String, Surface> heldFields;
  private Snapshot heldSnapshot;
  /** A fragmented text message being gathered, and its size so far. */
  private final List<WebSocketFrame> fragments = new ArrayList<>();
  private long fragmentBytes;
  /** The rest of a refused fragmented message is dropped, up to its final fragment. */
  private boolean dropping;

  ModerationHandler(Snapshot.Source snapshots, GatewayEvents events) {
    this.snapshots = snapshots;
    this.events = events;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof WebSocketFrame frame) {
      onFrame(ctx, frame);
    } else if (msg instanceof HttpRequest request) {
      onRequest(ctx, request);
    } else if (msg instanceof HttpContent content && heldFields != null) {
      held.add(content);
      if (content instanceof LastHttpContent) {
        checkBody(ctx);
      }
    } else {
      ctx.fireChannelRead(msg);
    }
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
    Snapshot s = snapshots.get();
    Moderation m = s.moderation;
    Map<String, Surface> fields = null;
    if (!m.http().isEmpty() && !request.decoderResult().isFailure()) {
      NettyRequestView view = NettyRequestView.of(request, ctx.channel().remoteAddress());
      if (!view.websocketUpgrade()) {
        Check c = m.routes().select(view);
        fields = c.route() == null ? null : m.http().get(c.route());
      }
    }
    if (fields == null) {
      ctx.fireChannelRead(request);
      return;
    }
    heldFields = fields;
    heldSnapshot = s;
    held.add(request);
    if (HttpUtil.is100ContinueExpected(request)) {
      request.headers().remove(HttpHeaderNames.EXPECT);
      ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
          HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
    }
    if (request instanceof LastHttpContent) {
      checkBody(ctx);
    }
  }

  private void checkBody(ChannelHandlerContext ctx) {
    HttpRequest request = (HttpRequest) held.get(0);
    String body = utf8(held);
    Refusal refusal = check(heldSnapshot.moderation, heldFields, body, events);
    List<Object> messages = new ArrayList<>(held);
    held.clear();
    heldFields = null;
    Snapshot s = heldSnapshot;
    heldSnapshot = null;
    if (refusal == null) {
      messages.forEach(ctx::fireChannelRead);
      return;
    }
    messages.forEach(ReferenceCountUtil::release);
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    FullHttpResponse response = rejectResponse(request, refusal, s, keepAlive);
    events.generated(response.status().code());
    ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
        : ChannelFutureListener.CLOSE);
  }

  /** The 422 for a refused request body. */
  FullHttpResponse rejectResponse(HttpRequest request, Refusal refusal, Snapshot s,
      boolean keepAlive) {
    return Generated.json(request, HttpResponseStatus.UNPROCESSABLE_ENTITY, refusal.json(),
        s.cors, keepAlive);
  }

  private void onFrame(ChannelHandlerContext ctx, WebSocketFrame frame) {
    boolean continuation = frame instanceof ContinuationWebSocketFrame;
    if (dropping && continuation) {
      dropping = !frame.isFinalFragment();
      frame.release();
      return;
    }
    Snapshot s = snapshots.get();
    Moderation m = s.moderation;
    boolean gathering = !fragments.isEmpty();
    if (!(continuation ? gathering : frame instanceof TextWebSocketFrame
        && !m.websocket().isEmpty())) {
      ctx.fireChannelRead(frame); // control, binary, and text when nothing is moderated
      return;
    }
    fragments.add(frame);
    fragmentBytes += frame.content().readableBytes();
    if (!frame.isFinalFragment()) {
      if (fragmentBytes > s.ws.maxMessageBytes()) {
        dropping = true;
        refuseMessage(ctx, new Refusal(null, null, "too_long"));
      }
      return;
    }
    String text = utf8(fragments);
    String actionField = s.ws.actionField();
    String action = actionField == null ? null : readAction(text, actionField);
    Map<String, Surface> fields = new HashMap<>();
    Map<String, Surface> any = m.websocket().get(ModerationSettings.ANY_ACTION);
    if (any != null) {
      fields.putAll(any);
    }
    if (action != null && m.websocket().containsKey(action)) {
      fields.putAll(m.websocket().get(action));
    }
    Refusal refusal = fields.isEmpty() || m.moderator() == null ? null
        : check(m, fields, text, events);
    if (refusal == null) {
      List<WebSocketFrame> pass = new ArrayList<>(fragments);
      fragments.clear();
      fragmentBytes = 0;
      pass.forEach(ctx::fireChannelRead);
      return;
    }
    refuseMessage(ctx, new Refusal(action, refusal.field, refusal.reason));
  }

  private void refuseMessage(ChannelHandlerContext ctx, Refusal refusal) {
    fragments.forEach(ReferenceCountUtil::release);
    fragments.clear();
    fragmentBytes = 0;
    ctx.writeAndFlush(new TextWebSocketFrame(refusal.json()));
  }

  /** The messages' bytes as one UTF-8 string: a character may straddle two chunks. */
  private static String utf8(List<?> messages) {
    int size = 0;
    for (Object o : messages) {
      if (o instanceof ByteBufHolder h) {
        size += h.content().readableBytes();
      }
    }
    byte[] bytes = new byte[size];
    int at = 0;
    for (Object o : messages) {
      if (o instanceof ByteBufHolder h) {
        int n = h.content().readableBytes();
        h.content().getBytes(h.content().readerIndex(), bytes, at, n);
        at += n;
      }
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static String readAction(CharSequence text, String field) {
    String[] action = new String[1];
    JsonFields.forEach(text, Map.of(field, field), (k, v) -> {
      if (action[0] == null) {
        action[0] = v;
      }
    });
    return action[0];
  }

  /**
   * The first refused field of {@code json}, or null; every checked field is reported. The one
   * check of a request body, for the HTTP/1.1 relay and the HTTP/2 streams alike.
   */
  static Refusal check(Moderation m, Map<String, Surface> fields, CharSequence json,
      GatewayEvents events) {
    Refusal[] first = new Refusal[1];
    JsonFields.forEach(json, fields, (field, value) -> {
      if (first[0] != null) {
        return;
      }
      Surface surface = fields.get(field);
      Ruling r = m.moderator().check(value, surface);
      events.moderated(surface.label(), r.reason().label());
      if (!r.allowed()) {
        first[0] = new Refusal(null, field, r.reason().label());
      }
    });
    return first[0];
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    held.forEach(ReferenceCountUtil::release);
    held.clear();
    fragments.forEach(ReferenceCountUtil::release);
    fragments.clear();
    fragmentBytes = 0;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    handlerRemoved(ctx);
    ctx.fireChannelInactive();
  }

  /** Why a body or message was refused; the JSON the client gets. */
  record Refusal(String action, String field, String reason) {
    String json() {
      StringBuilder sb = new StringBuilder(80).append("{\"error\":\"rejected\"");
      if (action != null) {
        Generated.quote(sb.append(",\"action\":"), action);
      }
      if (field != null) {
        Generated.quote(sb.append(",\"field\":"), field);
      }
      return sb.append(",\"reason\":\"").append(reason).append("\"}").toString();
    }
  }
}
