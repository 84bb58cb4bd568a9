package dev.sluice.gateway;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fires {@link IdleStateEvent#ALL_IDLE_STATE_EVENT} when a connection has neither read nor
 * written for the idle timeout. Unlike Netty's {@code IdleStateHandler} it adds no listener (and
 * no promise) to every write, and reads no clock per message: a read or a write only sets a flag,
 * and one task per connection looks at it four times per timeout. The event fires after four looks
 * in a row found no activity: between 1 and 1.25 timeouts after the last read or write.
 */
final class IdleTimeout extends ChannelDuplexHandler {

  private static final int LOOKS = 4;

  private final long lookNanos;
  private boolean active;
  private int quietLooks;
  private ScheduledFuture<?> task;

  IdleTimeout(long timeoutMillis) {
    this.lookNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis) / LOOKS;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    if (lookNanos > 0) {
      task = ctx.executor().schedule(() -> check(ctx), lookNanos, TimeUnit.NANOSECONDS);
    }
    ctx.fireChannelActive();
  }

  private void check(ChannelHandlerContext ctx) {
    if (!ctx.channel().isOpen()) {
      return;
    }
    if (active) {
      active = false;
      quietLooks = 0;
    } else if (++quietLooks >= LOOKS) {
      quietLooks = 0;
      ctx.fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
    }
    task = ctx.executor().schedule(() -> check(ctx), lookNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    active = true;
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    active = true;
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
