package dev.sluice.redis;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * The store's connections ("lanes") and which one a call takes. Lane 0 is the shared one, on
 * the store's own I/O thread. With {@link RedisStore.Builder#eventLoops}, lanes 1..n live on
 * the given loops, one each, and a call made on a loop takes that loop's lane: it is written on
 * the calling thread, and its answer read and completed there, so no call crosses threads twice
 * (on the 2-vCPU benchmark VM each crossing was a context switch: docs/bench/gateway.md).
 *
 * <p>Every other thread takes the shared lane, and so does every blocking call, wherever it is
 * made: a loop that waited for its own lane would wait for an answer only it can read.
 */
final class Lanes {

  /** One connection, once connected; {@code loop} is null for the shared lane. */
  static final class Lane {
    final int index;
    final EventLoop loop;
    private volatile Library.Conn conn;

    Lane(int index, EventLoop loop) {
      this.index = index;
      this.loop = loop;
    }

    /** The connection once the store is ready, else null. */
    Library.Conn conn() {
      return conn;
    }
  }

  private final Lane shared = new Lane(0, null);
  private final Lane[] onLoops;
  private final FastThreadLocal<Lane> mine = new FastThreadLocal<>() {
    @Override
    protected Lane initialValue() {
      return scan(Thread.currentThread());
    }
  };

  Lanes(List<EventLoop> loops) {
    this.onLoops = new Lane[loops.size()];
    for (int i = 0; i < onLoops.length; i++) {
      onLoops[i] = new Lane(i + 1, loops.get(i));
    }
  }

  /** All lanes: 0 the shared one, then one per loop. */
  int size() {
    return onLoops.length + 1;
  }

  Lane get(int index) {
    return index == 0 ? shared : onLoops[index - 1];
  }

  /** The lane for a call on this thread; {@code blocking}: the caller will wait for it. */
  Lane pick(boolean blocking) {
    if (blocking || onLoops.length == 0) {
      return shared;
    }
    Thread t = Thread.currentThread();
    // Netty's loops run on FastThreadLocalThreads: an indexed read, not a scan of the loops.
    return t instanceof FastThreadLocalThread ? mine.get() : scan(t);
  }

  private Lane scan(Thread t) {
    for (Lane l : onLoops) {
      if (l.loop.inEventLoop(t)) {
        return l;
      }
    }
    return shared;
  }

  /** Ready: every lane gets its connection, {@code conns} in lane order. */
  void publish(List<Library.Conn> conns) {
    for (int i = 0; i < conns.size(); i++) {
      get(i).conn = conns.get(i);
    }
  }

  /**
   * True when every lane's connection is open now. Standalone only: a cluster connection is
   * open while any node is.
   */
  boolean allOpen() {
    for (int i = 0; i < size(); i++) {
      Library.Conn c = get(i).conn;
      if (c == null || !c.raw().isOpen()) {
        return false;
      }
    }
    return true;
  }

  /** Drops the loops' cached lanes (they would hold a closed store for the loops' lifetime). */
  void forget() {
    for (Lane l : onLoops) {
      try {
        l.loop.execute(mine::remove);
      } catch (RejectedExecutionException e) {
        // the loop is gone, and its thread-locals with it
      }
    }
  }
}
