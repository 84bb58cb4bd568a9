package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.function.Consumer;

/**
 * Joins the fragments of a client's message before the relay sends it upstream. Relayed one to
 * one, 1 MiB sent as 1-byte fragments reached the upstream as a million frames (a Node {@code ws}
 * upstream crashed with "Too many message fragments") and doubled the gateway's memory (issue 7).
 * Here a fragmented message of up to {@code maxBytes} (the guard's message cap) goes up as one
 * frame; a longer one, which only happens without the guard, as pieces of {@code maxBytes}. RFC
 * 6455 section 5.4 lets an intermediary change the fragmentation of a message.
 *
 * <p>Memory: at most {@code maxBytes} per connection, which the frame decoder may hold for one
 * frame anyway. Control frames pass at once, between fragments too. Event loop only.
 */
final class FrameCoalescer {

  private final int maxBytes;
  private final ByteBufAllocator alloc;
  private ByteBuf pending;
  private boolean text;
  /** Whether a piece of the current message went up already (the next one is a continuation). */
  private boolean started;

  FrameCoalescer(int maxBytes, ByteBufAllocator alloc) {
    this.maxBytes = maxBytes;
    this.alloc = alloc;
  }

  /** Takes {@code frame} (and its reference); hands what is to be relayed now to {@code out}. */
  void add(WebSocketFrame frame, Consumer<WebSocketFrame> out) {
    boolean data = frame instanceof TextWebSocketFrame || frame instanceof BinaryWebSocketFrame;
    if (!data && !(frame instanceof ContinuationWebSocketFrame)) {
      out.accept(frame);
      return;
    }
    if (data) {
      discard();
      if (frame.isFinalFragment()) {
        out.accept(frame);
        return;
      }
      text = frame instanceof TextWebSocketFrame;
      started = false;
    } else if (pending == null && !started) {
      // A continuation with no message begun: the decoder refuses those; pass it on as it is.
      out.accept(frame);
      return;
    }
    ByteBuf content = frame.content();
    boolean fin = frame.isFinalFragment();
    if (pending != null && pending.readableBytes() + content.readableBytes() > maxBytes) {
      out.accept(piece(pending, false));
      pending = null;
    }
    if (pending == null) {
      pending = alloc.buffer(Math.min(maxBytes, Math.max(256, content.readableBytes() * 2)));
    }
    pending.writeBytes(content);
    frame.release();
    if (fin) {
      ByteBuf whole = pending;
      pending = null;
      out.accept(piece(whole, true));
    }
  }

  private WebSocketFrame piece(ByteBuf content, boolean fin) {
    WebSocketFrame f;
    if (started) {
      f = new ContinuationWebSocketFrame(fin, 0, content);
    } else {
      f = text ? new TextWebSocketFrame(fin, 0, content) : new BinaryWebSocketFrame(fin, 0, content);
    }
    started = !fin;
    return f;
  }

  /** Drops a message in progress (the connection is closing). */
  void discard() {
    if (pending != null) {
      pending.release();
      pending = null;
    }
    started = false;
  }
}
