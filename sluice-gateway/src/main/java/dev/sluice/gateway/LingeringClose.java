package dev.sluice.gateway;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The close after an answer the client must read although it may still be sending (a 400, a
 * 413): shut down the output, so that the answer and a FIN go out, keep reading (and dropping)
 * for a while, then close. Closing at once with unread input makes the kernel send an RST, which
 * can destroy the answer before the client reads it (RFC 9112 section 9.6).
 */
final class LingeringClose {

  static final long LINGER_MILLIS = 2000;

  private LingeringClose() {}

  /**
   * Half-closes {@code channel} (the channel of {@code ctx}'s pipeline) and closes it after
   * {@link #LINGER_MILLIS}; false, doing nothing, when it is not an open socket.
   */
  static boolean start(ChannelHandlerContext ctx, Channel channel) {
    if (!(channel instanceof SocketChannel socket) || !socket.isActive()) {
      return false;
    }
    socket.shutdownOutput().addListener(done -> {
      if (!done.isSuccess()) {
        ctx.close();
      }
    });
    ctx.executor().schedule(() -> {
      ctx.close();
    }, LINGER_MILLIS, TimeUnit.MILLISECONDS);
    return true;
  }
}
