package dev.sluice.gateway;

import dev.sluice.netty.ReadGate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;

/** An HTTP/1.1 connection as the client of its exchanges: its bytes go out as they are. */
final class ConnectionSide implements ClientSide {

  private final ChannelHandlerContext ctx;
  private final Channel channel;
  private final String peerIp;

  ConnectionSide(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.channel = ctx.channel();
    this.peerIp = Forwarding.peerIp(channel);
  }

  Channel channel() {
    return channel;
  }

  @Override
  public EventLoop eventLoop() {
    return channel.eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return ctx.alloc();
  }

  @Override
  public boolean isActive() {
    return channel.isActive();
  }

  @Override
  public boolean isWritable() {
    return channel.isWritable();
  }

  @Override
  public void write(ByteBuf bytes) {
    ctx.write(bytes, ctx.voidPromise());
  }

  @Override
  public void flush() {
    ctx.flush();
  }

  @Override
  public void pause(int reason) {
    ReadGate.pause(channel, reason);
  }

  @Override
  public void resume(int reason) {
    ReadGate.resume(channel, reason);
  }

  @Override
  public boolean paused(int reason) {
    return ReadGate.paused(channel, reason);
  }

  @Override
  public void endAfterWrites() {
    ctx.flush();
    if (!LingeringClose.start(ctx, channel)) {
      ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }
  }

  @Override
  public void endNow() {
    ctx.close();
  }

  @Override
  public String peerIp() {
    return peerIp;
  }
}
