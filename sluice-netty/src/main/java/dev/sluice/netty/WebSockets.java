package dev.sluice.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;

/** WebSocket helpers shared by the handlers and the gateway. */
public final class WebSockets {

  /** Close code: try again later (seed 000's refused connect). */
  public static final int TRY_AGAIN_LATER = 1013;
  /** Close code: policy violation (flood, strikes). */
  public static final int POLICY_VIOLATION = 1008;
  /** Close code: message too big. */
  public static final int MESSAGE_TOO_BIG = 1009;

  private WebSockets() {}

  /** The {@code ws://} URL a handshake answers for {@code request}. */
  public static String url(HttpRequest request) {
    String host = request.headers().get(HttpHeaderNames.HOST, "localhost");
    return "ws://" + host + request.uri();
  }

  /** The head of {@code request} as a body-less {@link FullHttpRequest}, as handshakers want. */
  public static FullHttpRequest head(HttpRequest request) {
    return new DefaultFullHttpRequest(request.protocolVersion(), request.method(), request.uri(),
        Unpooled.EMPTY_BUFFER, request.headers().copy(), new DefaultHttpHeaders());
  }

  /**
   * Completes the WebSocket handshake of {@code request} on {@code channel} and closes the new
   * socket at once with {@code code}: the client learns why, which a refused HTTP upgrade cannot
   * tell a browser's WebSocket API.
   */
  public static void closeAfterHandshake(Channel channel, HttpRequest request, int code,
      String reason, RateLimitListener listener) {
    WebSocketServerHandshaker handshaker = new WebSocketServerHandshakerFactory(url(request),
        WebSocketServerHandshaker.SUB_PROTOCOL_WILDCARD,
        WebSocketDecoderConfig.newBuilder().maxFramePayloadLength(125).build())
        .newHandshaker(request);
    if (handshaker == null) {
      WebSocketServerHandshakerFactory.sendUnsupportedVersionResponse(channel)
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    handshaker.handshake(channel, head(request), null, channel.newPromise()).addListener(f -> {
      if (!f.isSuccess()) {
        channel.close();
        return;
      }
      listener.webSocketOpened();
      listener.webSocketClosed(code);
      channel.writeAndFlush(new CloseWebSocketFrame(code, reason))
          .addListener(ChannelFutureListener.CLOSE);
    });
  }
}
