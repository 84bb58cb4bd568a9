package dev.sluice.gateway;

import dev.sluice.netty.ReadGate;
import dev.sluice.netty.WebSockets;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakerFactory;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import java.util.concurrent.TimeUnit;

/**
 * One proxied WebSocket: the gateway opens a WebSocket to the upstream first, completes the
 * client's handshake with the subprotocol the upstream chose, then relays frames both ways, a
 * fragmented client message as one frame ({@link FrameCoalescer}); close frames pass through.
 * Closes never cut a side short: the client is closed with a lingering close
 * ({@link WebSockets#closeLingering}) unless it closed first, and the upstream gets a close frame
 * and a bounded wait for its answer. Runs on the client channel's event loop, which the upstream
 * channel shares.
 */
final class WebSocketRelay {
  private static final int UPSTREAM_MAX_FRAME = 16 << 20;

  private final ChannelHandlerContext ctx;
  private final Channel client;
  private final HttpRequest request;
  private final Upstream upstream;
  private final Snapshot snap;
  private final GatewayEvents events;
  private final String proto;
  private WebSocketClientHandshaker handshaker;
  private Channel ws;
  private boolean open;
  private boolean closeSentUp;
  private boolean closeSentClient;
  private boolean closeFromUpstream;
  private final FrameCoalescer coalescer;

  WebSocketRelay(ChannelHandlerContext ctx, HttpRequest request, Upstream upstream, Snapshot snap,
      GatewayEvents events, String proto) {
    this.proto = proto;
    this.ctx = ctx;
    this.client = ctx.channel();
    this.request = request;
    this.upstream = upstream;
    this.snap = snap;
    this.events = events;
    this.coalescer = new FrameCoalescer(snap.ws.maxMessageBytes(), client.alloc());
  }

  /** The upstream WebSocket connection, or null before it is connected. */
  Channel upstreamChannel() {
    return ws;
  }

  void start() {
    ReadGate.pause(client, ReadGate.UPSTREAM);
    URI uri;
    try {
      uri = new URI(upstream.wsScheme() + "://" + upstream.authority
          + request.uri());
    } catch (java.net.URISyntaxException e) {
      fail(HttpResponseStatus.BAD_REQUEST, "bad request", "the request target is not a valid URI");
      return;
    }
    HttpHeaders h = request.headers().copy();
    Forwarding.stripHopByHop(h);
    h.remove(HttpHeaderNames.SEC_WEBSOCKET_KEY);
    h.remove(HttpHeaderNames.SEC_WEBSOCKET_VERSION);
    h.remove(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS);
    h.remove(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL);
    h.remove(HttpHeaderNames.CONTENT_LENGTH);
    Forwarding.forward(h, Forwarding.peer(client, snap, proto), upstream.authority,
        snap.config.trust().clientHeaders());
    h.remove(HttpHeaderNames.HOST);
    handshaker = WebSocketClientHandshakerFactory.newHandshaker(uri, WebSocketVersion.V13,
        request.headers().get(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL), false, h,
        UPSTREAM_MAX_FRAME);
    UpstreamPool.open(UpstreamPool.bootstrap(client.eventLoop(), snap,
        new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(64 * 1024),
                new UpstreamWs());
            upstream.secure(ch);
          }
        }), upstream).addListener((ChannelFutureListener) f -> {
      if (!client.isActive()) {
        f.channel().close();
        return;
      }
      if (!f.isSuccess()) {
        fail(HttpResponseStatus.BAD_GATEWAY, "bad gateway", "could not connect to the upstream "
            + upstream.authority + ": " + Generated.reason(f.cause()));
        return;
      }
      ws = f.channel();
      handshaker.handshake(ws).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    });
  }

  private void fail(HttpResponseStatus status, String error, String detail) {
    events.generated(status.code());
    ReadGate.resume(client, ReadGate.UPSTREAM);
    ctx.writeAndFlush(Generated.json(request, status, Generated.error(error, detail), snap.cors,
        false)).addListener(ChannelFutureListener.CLOSE);
    if (ws != null) {
      ws.close();
    }
  }

  /** The upstream accepted: now complete the client's handshake with the same subprotocol. */
  private void upstreamOpen() {
    WebSocketDecoderConfig config = WebSocketDecoderConfig.newBuilder()
        .maxFramePayloadLength(snap.ws.maxMessageBytes())
        .allowExtensions(false)
        // The guard answers a refused frame with a lingering close; the decoder must not close.
        .closeOnProtocolViolation(false)
        .build();
    WebSocketServerHandshaker server = new WebSocketServerHandshakerFactory(
        WebSockets.url(request), handshaker.actualSubprotocol(), config).newHandshaker(request);
    if (server == null) {
      WebSocketServerHandshakerFactory.sendUnsupportedVersionResponse(client)
          .addListener(ChannelFutureListener.CLOSE);
      ws.close();
      return;
    }
    server.handshake(client, WebSockets.head(request), null, client.newPromise())
        .addListener((ChannelFutureListener) f -> {
          if (!f.isSuccess()) {
            client.close();
            ws.close();
            return;
          }
          open = true;
          ReadGate.resume(client, ReadGate.UPSTREAM);
        });
  }

  void fromClient(Object msg) {
    if (!(msg instanceof WebSocketFrame frame)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (ws == null || !ws.isActive() || closeSentUp) {
      frame.release();
      return;
    }
    coalescer.add(frame, this::sendUp);
  }

  private void sendUp(WebSocketFrame frame) {
    if (frame instanceof CloseWebSocketFrame) {
      coalescer.discard();
      // The client closes: the upstream answers, then the client is answered and closed.
      closeSentUp = true;
      closeUpstreamLater();
    }
    ws.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    if (!ws.isWritable()) {
      ReadGate.pause(client, ReadGate.UPSTREAM);
    }
  }

  private void toClient(WebSocketFrame frame) {
    if (closeSentClient || !client.isActive()) {
      frame.release();
      if (frame instanceof CloseWebSocketFrame && closeSentUp) {
        ws.close();
      }
      return;
    }
    if (frame instanceof CloseWebSocketFrame close) {
      if (closeSentUp) {
        // The answer to the client's close: nothing more comes from either side.
        closeSentClient = true;
        ctx.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
        ws.close();
        return;
      }
      // The upstream closes first: the client must read the code even if it is still sending.
      closeFromUpstream = true;
      int code = close.statusCode();
      String reason = close.reasonText();
      frame.release();
      WebSockets.closeLingering(client, code < 0 ? 1000 : code, reason, snap.ws.closeTimeout());
      return;
    }
    ctx.writeAndFlush(frame);
    if (!client.isWritable()) {
      ws.config().setAutoRead(false);
    }
  }

  /**
   * The client is being closed (by a guard, the idle timeout, or because the upstream closed):
   * no more frames go to it, and the upstream is told with 1001 and the client's code in the
   * reason, or answered if it closed first.
   */
  void clientClosing(WebSockets.Closing closing) {
    closeSentClient = true;
    coalescer.discard();
    if (ws == null || !ws.isActive() || closeSentUp) {
      return;
    }
    closeSentUp = true;
    if (closeFromUpstream) {
      ws.writeAndFlush(new CloseWebSocketFrame(closing.code(), closing.reason()))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ws.writeAndFlush(new CloseWebSocketFrame(WebSockets.GOING_AWAY,
        WebSockets.fitReason(closing.code() + " " + closing.reason()))).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    closeUpstreamLater();
  }

  void clientGone() {
    coalescer.discard();
    if (ws == null || !ws.isActive() || closeSentUp) {
      // A close sent up already has its timer.
      return;
    }
    closeSentUp = true;
    ws.writeAndFlush(new CloseWebSocketFrame(WebSockets.GOING_AWAY, "client went away"))
        .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    closeUpstreamLater();
  }

  /** Closes the upstream connection if it has not answered our close frame in time. */
  private void closeUpstreamLater() {
    Channel u = ws;
    u.eventLoop().schedule(() -> {
      u.close();
    }, snap.ws.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
  }

  private void upstreamGone() {
    if (!client.isActive()) {
      return;
    }
    if (!open) {
      if (handshaker == null || !handshaker.isHandshakeComplete()) {
        fail(HttpResponseStatus.BAD_GATEWAY, "bad gateway",
            "the upstream closed the connection during the WebSocket handshake");
      }
      return;
    }
    if (!closeSentClient) {
      closeSentUp = true;
      WebSockets.closeLingering(client, 1014, "upstream closed the connection",
          snap.ws.closeTimeout());
    }
  }

  /** Reads the upstream WebSocket connection. */
  private final class UpstreamWs extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext uctx, Object msg) {
      if (!handshaker.isHandshakeComplete()) {
        if (msg instanceof FullHttpResponse response) {
          try {
            handshaker.finishHandshake(uctx.channel(), response);
          } catch (WebSocketHandshakeException e) {
            fail(HttpResponseStatus.BAD_GATEWAY, "bad gateway",
                "the upstream refused the WebSocket upgrade with " + response.status().code());
            return;
          } finally {
            response.release();
          }
          upstreamOpen();
          return;
        }
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof WebSocketFrame frame) {
        toClient(frame);
        return;
      }
      ReferenceCountUtil.release(msg);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext uctx) {
      if (uctx.channel().isWritable() && open) {
        ReadGate.resume(client, ReadGate.UPSTREAM);
      }
      uctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext uctx) {
      upstreamGone();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext uctx, Throwable cause) {
      uctx.close();
    }
  }
}
