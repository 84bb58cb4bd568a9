package dev.sluice.rls;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The decision API's own listener ({@code sluice serve --check-api HOST:PORT}): HTTP/1.1 with
 * keep-alive, {@code POST /v1/check} and nothing else (404), on one event loop of its own, apart
 * from the gateway's and from gRPC's. Bodies are bounded by {@link CheckApi#MAX_BODY_BYTES}
 * (413), heads by 4 KiB of request line and 8 KiB of fields, idle connections close after
 * {@value #IDLE_SECONDS} s. While a decision is pending the connection's reads pause, so a
 * pipelining client cannot queue work; they resume when the answer is written.
 */
public final class CheckServer implements AutoCloseable {

  static final int IDLE_SECONDS = 60;

  private final EventLoopGroup group;
  private final Channel channel;

  private CheckServer(EventLoopGroup group, Channel channel) {
    this.group = group;
    this.channel = channel;
  }

  /** Binds {@code address} (port 0: any free port) and serves {@code api} there. */
  public static CheckServer start(InetSocketAddress address, CheckApi api) throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1,
        new DefaultThreadFactory("sluice-check", true), NioIoHandler.newFactory());
    try {
      Channel ch = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 256)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel c) {
              c.pipeline()
                  .addLast(new IdleStateHandler(0, 0, IDLE_SECONDS, TimeUnit.SECONDS))
                  .addLast(new HttpServerCodec(4096, 8192, 8192))
                  .addLast(new Aggregator())
                  .addLast(new Exchange(api));
            }
          })
          .bind(address).sync().channel();
      return new CheckServer(group, ch);
    } catch (Exception e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
  }

  public int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /**
   * Gathers a body up to the cap. Past it: a JSON 413 with {@code Connection: close}, then the
   * rest of that body is read and dropped (up to {@value #MAX_DRAIN} bytes) before the
   * connection closes, because closing with the client's bytes unread resets the connection and
   * the client never sees the 413.
   */
  private static final class Aggregator extends HttpObjectAggregator {

    static final int MAX_DRAIN = 1 << 20;

    /** Bytes dropped since the 413, or -1 when not draining. */
    private long drained = -1;

    Aggregator() {
      super(CheckApi.MAX_BODY_BYTES, true);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
      if (drained < 0) {
        super.channelRead(ctx, msg);
        return;
      }
      boolean done = !(msg instanceof HttpContent) || msg instanceof LastHttpContent;
      if (msg instanceof HttpContent c) {
        drained += c.content().readableBytes();
      }
      ReferenceCountUtil.release(msg);
      if (done || drained > MAX_DRAIN) {
        ctx.close();
      }
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
      // MessageAggregator releases the message after this returns.
      drained = 0;
      Exchange.send(ctx, new CheckApi.Answer(413, CheckApi.error("payload too large",
          "a decision request may be at most " + CheckApi.MAX_BODY_BYTES + " bytes")), false)
          .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }
  }

  /** One connection's requests, one at a time. */
  private static final class Exchange extends SimpleChannelInboundHandler<FullHttpRequest> {

    private final CheckApi api;

    Exchange(CheckApi api) {
      this.api = api;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest r) {
      boolean keepAlive = HttpUtil.isKeepAlive(r);
      if (r.decoderResult().isFailure()) {
        write(ctx, new CheckApi.Answer(400, CheckApi.error("bad request",
            "not an HTTP/1.1 request")), false);
        return;
      }
      String uri = r.uri();
      int q = uri.indexOf('?');
      String path = q < 0 ? uri : uri.substring(0, q);
      if (!path.equals(CheckApi.PATH)) {
        write(ctx, new CheckApi.Answer(404, CheckApi.error("not found", "this listener serves "
            + "POST " + CheckApi.PATH + " only")), keepAlive);
        return;
      }
      if (!HttpMethod.POST.equals(r.method())) {
        write(ctx, new CheckApi.Answer(405, CheckApi.error("method not allowed",
            CheckApi.PATH + " answers POST with a JSON body")), keepAlive);
        return;
      }
      ctx.channel().config().setAutoRead(false);
      // check(ByteBuffer) decodes the body before it returns: the buffer may go with r.
      api.check(r.content().nioBuffer()).whenComplete((answer, error) ->
          ctx.executor().execute(() -> {
            ctx.channel().config().setAutoRead(true);
            if (error != null) {
              write(ctx, new CheckApi.Answer(500, CheckApi.error("internal error",
                  String.valueOf(error))), false);
            } else {
              write(ctx, answer, keepAlive);
            }
          }));
    }

    private static void write(ChannelHandlerContext ctx, CheckApi.Answer a, boolean keepAlive) {
      send(ctx, a, keepAlive).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
          : ChannelFutureListener.CLOSE);
    }

    /** Writes the answer; {@code Connection: close} unless {@code keepAlive}. */
    static ChannelFuture send(ChannelHandlerContext ctx, CheckApi.Answer a, boolean keepAlive) {
      ByteBuf body = Unpooled.copiedBuffer(a.json(), StandardCharsets.UTF_8);
      FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
          HttpResponseStatus.valueOf(a.status()), body);
      res.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=utf-8")
          .set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
          .set(HttpHeaderNames.CACHE_CONTROL, "no-store");
      if (a.status() == 405) {
        res.headers().set(HttpHeaderNames.ALLOW, "POST");
      }
      if (a.retryAfterSeconds() >= 0) {
        res.headers().set(HttpHeaderNames.RETRY_AFTER, a.retryAfterSeconds());
      }
      if (!keepAlive) {
        res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      }
      return ctx.writeAndFlush(res);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent) {
        ctx.close();
      } else {
        ctx.fireUserEventTriggered(evt);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
