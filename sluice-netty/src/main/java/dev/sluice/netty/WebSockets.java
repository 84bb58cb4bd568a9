package dev.sluice.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** WebSocket helpers shared by the handlers and the gateway. */
public final class WebSockets {

  /** Close code: try again later (seed 000's refused connect). */
  public static final int TRY_AGAIN_LATER = 1013;
  /** Close code: policy violation (flood, strikes). */
  public static final int POLICY_VIOLATION = 1008;
  /** Close code: message too big (size or fragment cap). */
  public static final int MESSAGE_TOO_BIG = 1009;
  /** Close code: going away (idle timeout; the other side of a relay left). */
  public static final int GOING_AWAY = 1001;

  /** How long a closing server waits for the client's close frame or EOF before it closes. */
  public static final Duration DEFAULT_CLOSE_TIMEOUT =
      dev.sluice.core.http.WebSocketDefaults.CLOSE_TIMEOUT;

  /**
   * Fired down the pipeline when the server starts closing a WebSocket with {@link
   * #closeLingering}: from then on no inbound frame reaches the handlers behind the decoder, and
   * the client has been sent {@code code}. A relay closes its other side on it.
   */
  public record Closing(int code, String reason) {}

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
   * socket with {@code code} ({@link #closeLingering}): the client learns why, which a refused HTTP
   * upgrade cannot tell a browser's WebSocket API.
   */
  public static void closeAfterHandshake(Channel channel, HttpRequest request, int code,
      String reason, RateLimitListener listener) {
    WebSocketServerHandshaker handshaker = new WebSocketServerHandshakerFactory(url(request),
        WebSocketServerHandshaker.SUB_PROTOCOL_WILDCARD,
        WebSocketDecoderConfig.newBuilder().maxFramePayloadLength(125)
            .closeOnProtocolViolation(false).build())
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
      closeLingering(channel, code, reason, DEFAULT_CLOSE_TIMEOUT);
    });
  }

  /**
   * Closes an upgraded {@code channel} with {@code code} so that the client receives the close
   * frame: later client frames are read and discarded, the close frame is written, the output shut,
   * and the socket closed on the client's close frame, its EOF, or after {@code timeout}. Call it
   * on the channel's event loop; a second call while closing does nothing.
   *
   * <p>The frame decoder must not close on its own: build it with {@code
   * closeOnProtocolViolation(false)} and close with its status here.
   *
   * @return false if the channel was closing or closed already
   */
  public static boolean closeLingering(Channel channel, int code, String reason,
      Duration timeout) {
    ChannelPipeline p = channel.pipeline();
    if (!channel.isActive() || p.get(LingeringClose.NAME) != null) {
      return false;
    }
    LingeringClose linger = new LingeringClose(code, fitReason(reason),
        Math.max(1, timeout.toNanos()));
    ChannelHandlerContext decoder = p.context(WebSocketFrameDecoder.class);
    if (decoder != null) {
      p.addAfter(decoder.name(), LingeringClose.NAME, linger);
    } else {
      // No decoder (frames are written in directly, as in an EmbeddedChannel): intercept first.
      p.addFirst(LingeringClose.NAME, linger);
    }
    return true;
  }

  /** {@code reason} cut to the 123 bytes of UTF-8 a close frame can carry. */
  public static String fitReason(String reason) {
    if (reason == null) {
      return "";
    }
    byte[] b = reason.getBytes(StandardCharsets.UTF_8);
    if (b.length <= 123) {
      return reason;
    }
    int end = 123;
    while (end > 0 && (b[end] & 0xc0) == 0x80) {
      end--;
    }
    return new String(b, 0, end, StandardCharsets.UTF_8);
  }
}
