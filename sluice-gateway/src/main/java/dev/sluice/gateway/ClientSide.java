package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;

/**
 * The client an exchange answers, whatever its protocol: an HTTP/1.1 connection
 * ({@link ConnectionSide}) or one HTTP/2 stream ({@link StreamSide}). The exchange writes HTTP/1.1
 * response bytes to it (a stream turns them into frames), and pauses and resumes its reads by
 * reason ({@link dev.sluice.netty.ReadGate}'s bits: a connection stops reading its socket, a
 * stream withholds its flow-control window). Event loop only.
 */
interface ClientSide {

  EventLoop eventLoop();

  ByteBufAllocator alloc();

  /** Whether the client is still there. */
  boolean isActive();

  /** Whether what is written now goes out without queueing beyond the high-water mark. */
  boolean isWritable();

  /** Writes HTTP/1.1 response bytes (the head, then the body as framed); not flushed. */
  void write(ByteBuf bytes);

  void flush();

  /** Stops reading the client's request bytes for {@code reason}. */
  void pause(int reason);

  /** Withdraws {@code reason}; reading resumes when none is left. */
  void resume(int reason);

  boolean paused(int reason);

  /**
   * Ends the client after what was written: a connection shuts its output and drains its input
   * for a moment (a lingering close) so the client reads the answer rather than a reset; a
   * stream ends.
   */
  void endAfterWrites();

  /** Ends the client now (a connection closes; a stream is reset). */
  void endNow();

  /** The client's address as text, for logs and the forwarding fields. */
  String peerIp();

  /** The protocol the access log names, or null for the request line's own (HTTP/1.x). */
  default String protocol() {
    return null;
  }
}
