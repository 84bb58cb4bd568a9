package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;

/**
 * An HTTP/1.1 connection's handler: its bytes go to its {@link Exchange} as they arrive, and the
 * exchange's bytes come back through a {@link ConnectionSide}; no HTTP object is made. The
 * connection is handed over only when it stops being HTTP/1.1: a WebSocket upgrade goes, with
 * the bytes after its head, to the pipeline that relays WebSockets (HTTP/2 switches before this
 * handler sees a byte). One instance per connection; event loop only.
 */
final class RelayHandler extends ChannelDuplexHandler {

  private final Snapshot.Source snapshots;
  private final GatewayEvents events;
  private final Upstream upstream;
  private final UpstreamPool pool;
  private final DecisionApi decisionApi;
  private final String proto;
  private final java.util.function.BiConsumer<ChannelPipeline, Exchange.Upgrade> webSocketPipeline;

  private ChannelHandlerContext ctx;
  private Exchange exchange;

  RelayHandler(Snapshot.Source snapshots, GatewayEvents events, Upstream upstream,
      UpstreamPool pool, DecisionApi decisionApi, String proto,
      java.util.function.BiConsumer<ChannelPipeline, Exchange.Upgrade> webSocketPipeline) {
    this.snapshots = snapshots;
    this.events = events;
    this.upstream = upstream;
    this.pool = pool;
    this.decisionApi = decisionApi;
    this.proto = proto;
    this.webSocketPipeline = webSocketPipeline;
  }

  /** Held back from the WebSocket pipeline, which sees the connection open only if it takes over. */
  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    exchange = new Exchange(snapshots, events, upstream, pool, decisionApi, proto,
        new ConnectionSide(ctx), ctx.channel().remoteAddress() instanceof InetSocketAddress inet
            ? inet.getAddress() : null, this::handOver);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf buf) || exchange == null) {
      ReferenceCountUtil.release(msg);
      return;
    }
    exchange.read(buf);
  }

  /**
   * Installs the WebSocket pipeline after this handler, which sees the connection open, then
   * the upgrade as the exchange read it and what followed it; this handler leaves.
   */
  private void handOver(Exchange.Upgrade upgrade) {
    webSocketPipeline.accept(ctx.pipeline(), upgrade);
    ctx.fireChannelActive();
    ctx.fireChannelRead(upgrade.request());
    if (upgrade.rest().isReadable()) {
      ctx.fireChannelRead(upgrade.rest());
    } else {
      upgrade.rest().release();
    }
    ctx.fireChannelReadComplete();
    exchange = null;
    if (ctx.pipeline().context(this) != null) {
      ctx.pipeline().remove(this);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (exchange != null) {
      exchange.writabilityChanged();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      ctx.close();
      return;
    }
    if (evt instanceof ChannelInputShutdownEvent) {
      if (exchange != null) {
        exchange.inputShutdown();
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  /** Held back too: the WebSocket pipeline never saw the connection open. */
  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (exchange != null) {
      exchange.clientGone();
    }
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (exchange != null) {
      exchange.clientGone();
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
