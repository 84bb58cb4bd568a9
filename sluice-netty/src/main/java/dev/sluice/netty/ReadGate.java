package dev.sluice.netty;

import io.netty.channel.Channel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.AttributeKey;

/**
 * Reasons to stop reading from a client, each its own bit: the channel reads again only when no
 * handler wants it paused, so one handler resuming cannot undo another's backpressure or wait.
 * Call on the channel's event loop only.
 */
public final class ReadGate {

  /** A pipelined request waits for the response of the one before it. */
  public static final int PIPELINE = 1;
  /** The upstream connection is not writable, or is being opened. */
  public static final int UPSTREAM = 2;
  /** The rate-limit decision of a request waits for a remote store. */
  public static final int LIMIT = 4;
  /** A WebSocket lease or message decision waits for a remote store. */
  public static final int GUARD = 8;

  private static final AttributeKey<int[]> KEY = AttributeKey.valueOf("sluice.readGate");

  private ReadGate() {}

  /** Stops reading from {@code ch} for {@code reason}. */
  public static void pause(Channel ch, int reason) {
    int[] bits = bits(ch);
    bits[0] |= reason;
    if (!inputShutdown(ch)) {
      ch.config().setAutoRead(false);
    }
  }

  /** Withdraws {@code reason}; reading resumes when no reason is left. */
  public static void resume(Channel ch, int reason) {
    int[] bits = bits(ch);
    int before = bits[0];
    bits[0] &= ~reason;
    if (bits[0] == 0 && before != 0 && !inputShutdown(ch)) {
      ch.config().setAutoRead(true);
      ch.read();
    }
  }

  /**
   * A half-closed client (its output shut, the channel allowing half closure) has nothing more
   * to read, and the native transport refuses to change the interest of its input (epoll_ctl
   * fails with ENOENT): reads are left alone.
   */
  private static boolean inputShutdown(Channel ch) {
    return ch instanceof DuplexChannel d && d.isInputShutdown();
  }

  public static boolean paused(Channel ch, int reason) {
    return (bits(ch)[0] & reason) != 0;
  }

  private static int[] bits(Channel ch) {
    int[] bits = ch.attr(KEY).get();
    if (bits == null) {
      bits = new int[1];
      ch.attr(KEY).set(bits);
    }
    return bits;
  }
}
