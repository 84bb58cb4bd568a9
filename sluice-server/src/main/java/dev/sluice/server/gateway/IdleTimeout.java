package dev.sluice.server.gateway;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fires {@link IdleStateEvent#ALL_IDLE_STATE_EVENT} when a connection has neither read nor
 * written for the idle timeout. Unlike Netty's {@code IdleStateHandler} it counts a write when it
 * is made, not when it completes, so it adds no listener (and no promise) to every write; one
 * task per connection reschedules itself for the remaining time.
 */
final class IdleTimeout extends ChannelDuplexHandler {

  private final long timeoutNanos;
  private long lastActivity;
  private ScheduledFuture<?> task;

  IdleTimeout(long timeoutMillis) {
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    if (timeoutNanos > 0) {
      lastActivity = System.nanoTime();
      task = ctx.executor().schedule(() -> check(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
    }
    ctx.fireChannelActive();
  }

  private void check(ChannelHandlerContext ctx) {
    if (!ctx.channel().isOpen()) {
      return;
    }
    long idle = System.nanoTime() - lastActivity;
    if (idle >= timeoutNanos) {
      lastActivity = System.nanoTime();
      ctx.fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
      idle = 0;
    }
    task = ctx.executor().schedule(() -> check(ctx), timeoutNanos - idle, TimeUnit.NANOSECONDS);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    lastActivity = System.nanoTime();
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    lastActivity = System.nanoTime();
    ctx.write(msg, promise);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancel();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    cancel();
  }

  private void cancel() {
    if (task != null) {
      task.cancel(false);
      task = null;
    }
  }
}
