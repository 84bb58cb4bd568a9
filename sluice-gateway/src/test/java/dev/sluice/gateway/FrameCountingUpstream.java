package dev.sluice.gateway;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A WebSocket upstream that counts the data frames it receives (fragments too, nothing is
 * aggregated), echoes each complete message as one frame and records the close frames it gets.
 */
public final class FrameCountingUpstream implements AutoCloseable {

  public final AtomicLong dataFrames = new AtomicLong();
  final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
  final BlockingQueue<String> closes = new LinkedBlockingQueue<>();
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel server;

  public FrameCountingUpstream() throws InterruptedException {
    server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192),
                new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                    .websocketPath("/").checkStartsWith(true).allowExtensions(false)
                    .handleCloseFrames(false).maxFramePayloadLength(64 << 20).build()),
                new Counter());
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort());
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** One connection: reassembles messages itself so that it sees every frame. */
  private final class Counter extends SimpleChannelInboundHandler<WebSocketFrame> {
    private ByteBuf message;
    private boolean text;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
      if (frame instanceof CloseWebSocketFrame close) {
        closes.add(close.statusCode() + " " + close.reasonText());
        ctx.writeAndFlush(new CloseWebSocketFrame(close.statusCode(), close.reasonText()))
            .addListener(ChannelFutureListener.CLOSE);
        return;
      }
      if (!(frame instanceof TextWebSocketFrame || frame instanceof BinaryWebSocketFrame
          || frame instanceof ContinuationWebSocketFrame)) {
        return;
      }
      dataFrames.incrementAndGet();
      if (!(frame instanceof ContinuationWebSocketFrame)) {
        text = frame instanceof TextWebSocketFrame;
        message = Unpooled.buffer();
      }
      message.writeBytes(frame.content());
      if (frame.isFinalFragment()) {
        String s = message.toString(java.nio.charset.StandardCharsets.UTF_8);
        messages.add(s);
        ctx.writeAndFlush(text ? new TextWebSocketFrame(message) : new BinaryWebSocketFrame(message));
        message = null;
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (message != null) {
        message.release();
        message = null;
      }
      ctx.fireChannelInactive();
    }
  }
}
