package dev.sluice.netty;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The server's side of a closing handshake that the server starts (RFC 6455 section 7.1.1, done
 * the way nginx's lingering close does it). Closing a socket whose receive buffer still holds
 * unread client bytes makes the kernel send a reset instead of a FIN, and a reset can destroy the
 * close frame before the client reads it: a flooding client then sees 1006 or ECONNRESET instead
 * of 1008. So, placed right behind the frame decoder, this handler
 *
 * <ol>
 *   <li>tells the handlers behind it ({@link WebSockets.Closing}) and swallows every later inbound
 *       frame: nothing the client sends from now on is relayed or buffered past one frame;
 *   <li>writes the close frame and, once it is written, shuts the output (the client sees the
 *       frame, then EOF) while reading and discarding on;
 *   <li>closes when the client's close frame or EOF arrives, or at the timeout (2 s by default),
 *       whichever comes first.
 * </ol>
 *
 * <p>A flooding client that answers our close frame costs one frame decode per frame it still
 * sends, for at most the timeout; the state here is a few fields.
 */
final class LingeringClose extends ChannelInboundHandlerAdapter {

  static final String NAME = "sluice-ws-linger";

  private final int code;
  private final String reason;
  private final long timeoutNanos;
  private ChannelFuture written;
  private ScheduledFuture<?> timer;
  private boolean peerClosed;

  LingeringClose(int code, String reason, long timeoutNanos) {
    this.code = code;
    this.reason = reason;
    this.timeoutNanos = timeoutNanos;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    timer = ctx.executor().schedule(() -> {
      ctx.close();
    }, timeoutNanos, TimeUnit.NANOSECONDS);
    ctx.fireUserEventTriggered(new WebSockets.Closing(code, reason));
    written = ctx.writeAndFlush(new CloseWebSocketFrame(code, reason));
    written.addListener(f -> {
      if (!f.isSuccess() || peerClosed) {
        ctx.close();
      } else if (ctx.channel() instanceof DuplexChannel duplex) {
        duplex.shutdownOutput();
      }
    });
    // Whoever paused reads (backpressure towards an upstream) no longer matters: drain.
    ctx.channel().config().setAutoRead(true);
    ctx.read();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    boolean close = msg instanceof CloseWebSocketFrame;
    ReferenceCountUtil.release(msg);
    if (close && !peerClosed) {
      peerClosed = true;
      // Closing before our own frame is out would discard it; the write listener closes then.
      if (written.isDone()) {
        ctx.close();
      }
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // A corrupt frame now changes nothing: the decoder discards the rest, EOF or the timer ends it.
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    timer.cancel(false);
    ctx.fireChannelInactive();
  }
}
