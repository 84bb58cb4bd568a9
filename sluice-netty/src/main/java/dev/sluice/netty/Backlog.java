package dev.sluice.netty;

import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * What a handler receives while it waits for an asynchronous decision (a remote store): reads are
 * paused under the handler's own {@link ReadGate} reason, and the messages the decoder had already
 * produced are held in order, to be handled once the decision is in. With reads paused only what
 * was already read arrives, so the backlog stays small. Event loop only.
 */
final class Backlog {

  private final int reason;
  private final ArrayDeque<Object> held = new ArrayDeque<>(4);
  private boolean waiting;

  Backlog(int reason) {
    this.reason = reason;
  }

  boolean waiting() {
    return waiting;
  }

  void hold(Object msg) {
    held.add(msg);
  }

  /** Starts waiting: reads stop until {@link #stopWaiting}. */
  void startWaiting(Channel ch) {
    waiting = true;
    ReadGate.pause(ch, reason);
  }

  /**
   * The decision is in: hands the held messages to {@code handler}, in order, until one makes the
   * handler wait again; reads resume when nothing is left waiting.
   */
  void stopWaiting(Channel ch, Consumer<Object> handler) {
    waiting = false;
    drain(ch, handler);
  }

  /**
   * The wait is over but its outcome may start another wait (a delayed request): call this
   * first, then {@link #drain} once the outcome is applied.
   */
  void done() {
    waiting = false;
  }

  /** Hands the held messages to {@code handler} unless a new wait began; resumes reads if none. */
  void drain(Channel ch, Consumer<Object> handler) {
    while (!waiting && !held.isEmpty()) {
      handler.accept(held.poll());
    }
    if (!waiting) {
      ReadGate.resume(ch, reason);
    }
  }

  /** Releases everything held: the channel closed. */
  void discard() {
    waiting = false;
    Object msg;
    while ((msg = held.poll()) != null) {
      ReferenceCountUtil.release(msg);
    }
  }
}
