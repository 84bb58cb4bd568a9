package dev.sluice.gateway;

import dev.sluice.netty.WebSockets;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.util.function.IntConsumer;

/**
 * The last handler of a connection whose WebSocket upgrade its {@link Exchange} admitted: it
 * receives the upgrade as the exchange read it (no second parse), opens the
 * {@link WebSocketRelay} to the upstream and relays frames; an idle connection is closed with
 * 1001 "idle timeout"; a refused upgrade is completed and closed with 1013 "try again later"
 * (the settings' way of refusing a connect). When the connection ends, the exchange hears the status the client got
 * (101, or the refusal of a full connection cap, or the upstream's failure) and ends the request.
 * Before it: the codec (which the handshake turns into WebSocket frames), the guard (connection
 * caps, message sizes, floods, per-action limits) and the moderation of messages.
 */
final class WebSocketFront extends ChannelDuplexHandler {

  private final Upstream upstream;
  private final Snapshot snap;
  private final GatewayEvents events;
  private final String proto;
  private final IntConsumer ended;
  /** The upgrade was refused: it completes and closes with 1013 "try again later". */
  private final boolean refused;
  private WebSocketRelay relay;
  private int status;
  private boolean done;

  WebSocketFront(Upstream upstream, Snapshot snap, GatewayEvents events, String proto,
      IntConsumer ended, boolean refused) {
    this.refused = refused;
    this.upstream = upstream;
    this.snap = snap;
    this.events = events;
    this.proto = proto;
    this.ended = ended;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (relay != null) {
      relay.fromClient(msg);
      return;
    }
    if (msg instanceof HttpRequest request && refused) {
      WebSockets.closeAfterHandshake(ctx.channel(), request, WebSockets.TRY_AGAIN_LATER,
          "try again later", events);
      ReferenceCountUtil.release(request);
      return;
    }
    if (msg instanceof HttpRequest request) {
      relay = new WebSocketRelay(ctx, request, upstream, snap, events, proto);
      ReferenceCountUtil.release(request);
      relay.start();
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  /** Notes the status of the answer the client gets (101, or a refusal). */
  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (msg instanceof HttpResponse r && status == 0) {
      status = r.status().code();
    }
    ctx.write(msg, promise);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (relay != null && relay.upstreamChannel() != null) {
      relay.upstreamChannel().config().setAutoRead(ctx.channel().isWritable());
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof WebSockets.Closing closing && relay != null) {
      relay.clientClosing(closing);
    }
    if (evt instanceof ChannelInputShutdownEvent) {
      ctx.close();   // a WebSocket client that shut its output is gone (the relay half-closes)
      return;
    }
    if (evt instanceof IdleStateEvent) {
      // A WebSocket client is told why (1001), and the relay tells the upstream.
      WebSockets.closeLingering(ctx.channel(), WebSockets.GOING_AWAY, "idle timeout",
          snap.ws.closeTimeout());
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (relay != null) {
      relay.clientGone();
    }
    end();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    end();
  }

  private void end() {
    if (!done) {
      done = true;
      ended.accept(status);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
