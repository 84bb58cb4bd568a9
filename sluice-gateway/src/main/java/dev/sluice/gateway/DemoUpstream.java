package dev.sluice.gateway;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ChannelInboundHandlerAdapter;
import dev.sluice.netty.NettyRequestView;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The upstream {@code sluice serve} uses without {@code --upstream}: a loopback server on an
 * ephemeral port that answers every request with 200 and a small JSON body and echoes WebSocket
 * messages, so the gateway alone demonstrates every limit through its real proxy path.
 */
final class DemoUpstream implements AutoCloseable {

  /** The gateway's caps on the request line and on the headers are at most 1 MiB. */
  static final int MAX_HEAD_BYTES = 1 << 20;

  private final Channel server;

  private DemoUpstream(Channel server) {
    this.server = server;
  }

  static DemoUpstream start(EventLoopGroup group) throws InterruptedException {
    Channel ch = new ServerBootstrap().group(group).channel(Transport.serverChannel())
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel c) {
            // The largest request line and headers a gateway may be configured to pass on, so
            // the demo never refuses what the gateway accepted.
            c.pipeline().addLast(new HttpServerCodec(new HttpDecoderConfig()
                    .setMaxInitialLineLength(MAX_HEAD_BYTES).setMaxHeaderSize(MAX_HEAD_BYTES)),
                new HttpObjectAggregator(64 << 20),
                new Demo(),
                new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                    .websocketPath("/").checkStartsWith(true).allowExtensions(false)
                    .maxFramePayloadLength(64 << 20).build()),
                new CutRequests());
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    return new DemoUpstream(ch);
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort());
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
  }

  /** Answers plain requests and echoes data frames; upgrades and control frames go on. */
  private static final class Demo extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof FullHttpRequest bad && bad.decoderResult().isFailure()) {
        // Netty hands on what it could not decode as "GET /bad-request HTTP/1.0": answer it as
        // the gateway's front handler does, never with a 200 for a path nobody asked for.
        HttpResponseStatus status = Generated.decodeFailure(bad.decoderResult().cause());
        bad.release();
        ctx.writeAndFlush(Generated.json(null, status,
            Generated.error(status.reasonPhrase().toLowerCase(Locale.ROOT), null), null, false))
            .addListener(ChannelFutureListener.CLOSE);
        return;
      }
      if (msg instanceof FullHttpRequest upgrade && NettyRequestView.isWebSocketUpgrade(upgrade)) {
        ctx.fireChannelRead(msg);
        return;
      }
      if (msg instanceof FullHttpRequest request) {
        try {
          answer(ctx, request);
        } finally {
          request.release();
        }
      } else if (msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame
          || msg instanceof ContinuationWebSocketFrame) {
        ctx.writeAndFlush(msg);
      } else {
        ctx.fireChannelRead(msg);
      }
    }

    private static void answer(ChannelHandlerContext ctx, FullHttpRequest request) {
      {
        String path = new QueryStringDecoder(request.uri()).rawPath();
        StringBuilder body = new StringBuilder(96).append("{\"ok\":true,\"upstream\":\"sluice demo\",")
            .append("\"method\":");
        Generated.quote(body, request.method().name());
        body.append(",\"path\":");
        Generated.quote(body, path);
        body.append(",\"bodyBytes\":").append(request.content().readableBytes()).append("}\n");
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(request.protocolVersion(),
            HttpResponseStatus.OK, HttpMethod.HEAD.equals(request.method())
                ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=utf-8")
            .set(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        HttpUtil.setKeepAlive(response, keepAlive);
        ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
            : ChannelFutureListener.CLOSE);
      }
    }
  }

  /**
   * A request the gateway cut off (a body over its cap, a client that went away) closes the
   * connection mid-message: the aggregator reports that, and it is no fault of anyone's, so it is
   * closed here instead of reaching the pipeline's tail as a warning with a stack trace. Anything
   * else still goes on.
   */
  private static final class CutRequests extends io.netty.channel.ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (cause instanceof io.netty.handler.codec.PrematureChannelClosureException
          || cause instanceof java.io.IOException) {
        ctx.close();
        return;
      }
      ctx.fireExceptionCaught(cause);
    }
  }
}
