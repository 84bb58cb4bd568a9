package dev.sluice.gateway;

import dev.sluice.netty.ReadGate;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;

/**
 * A client side's connection to the upstream, for the {@link RelayUpstream} of its exchange: taken
 * from the loop's {@link UpstreamPool} or opened, the client's reads paused while it connects and
 * while it takes no more, the response timer, a failure reported, and at the end the connection
 * given back or closed. Event loop only.
 */
final class UpstreamLink implements UpstreamPool.Owner {

  /** What frames the exchanges on the link. */
  interface Side {
    /** A message of the linked connection. */
    void read(Object msg);

    /** The connection opened: what waited for it can be written. */
    void connected();

    /** It could not be opened; the client's reads run again. */
    void connectFailed(Throwable cause);

    /** It closed while linked; it is unlinked, and the client's reads run again. */
    void closed();

    /** No response within the route's {@code upstreamResponseTimeout}. */
    void timedOut();
  }

  private final ClientSide client;
  private final Upstream upstream;
  private final UpstreamPool pool;
  private final GatewayEvents events;
  private final Side side;
  private final Deadline responseTimer;

  private Channel up;
  private boolean connecting;
  private boolean released;

  UpstreamLink(ClientSide client, Upstream upstream, UpstreamPool pool, GatewayEvents events,
      Side side) {
    this.client = client;
    this.upstream = upstream;
    this.pool = pool;
    this.events = events;
    this.side = side;
    this.responseTimer = new Deadline(client.eventLoop(), side::timedOut);
  }

  /** The linked connection, null when none (not yet, opening, or gone). */
  Channel channel() {
    return up;
  }

  /**
   * Links a connection: the one linked if still open, else an idle one of the loop's pool, else
   * none and one is opened (false: the side queues until {@link Side#connected}).
   */
  boolean link(Snapshot snap) {
    if (connecting) {
      return false;
    }
    if (up != null && up.isActive()) {
      return true;
    }
    up = pool.take(client.eventLoop(), this);
    if (up != null) {
      return true;
    }
    connecting = true;
    client.pause(ReadGate.UPSTREAM);
    pool.connect(client.eventLoop(), snap, this).addListener((ChannelFutureListener) done -> {
      connecting = false;
      if (released || !client.isActive()) {
        done.channel().close();   // what waited is the side's to release, with its client
        return;
      }
      if (!done.isSuccess()) {
        client.resume(ReadGate.UPSTREAM);
        side.connectFailed(done.cause());
        return;
      }
      up = done.channel();
      // Written first: on an HTTP/2 stream, resuming delivers what was read at once (re-entering
      // the side), and what waited must reach the upstream before that.
      side.connected();
      if (up != null && up.isWritable()) {
        client.resume(ReadGate.UPSTREAM);   // else upstreamWritable resumes
      }
    });
    return false;
  }

  /** Writes and flushes {@code msg}, or only writes it; pauses the client if the upstream is full. */
  void write(Object msg, boolean flush) {
    if (flush) {
      up.writeAndFlush(msg, up.voidPromise());
    } else {
      up.write(msg, up.voidPromise());
    }
    if (!up.isWritable()) {
      client.pause(ReadGate.UPSTREAM);
    }
  }

  /** Starts the response timer once the request's last byte went up (none when zero). */
  void sent(Snapshot snap) {
    long nanos = snap.gateway.upstreamResponseTimeout().toNanos();
    if (nanos > 0) {
      responseTimer.arm(nanos);
    } else {
      responseTimer.disarm();
    }
  }

  /** The response head came: no timeout. */
  void answered() {
    responseTimer.disarm();
  }

  /**
   * The exchange failed with {@code status} (502 or 504): the connection closes and the failure
   * is reported with its cause, which is for the log (the client learns the status only).
   */
  void failed(HttpResponseStatus status, String cause) {
    close();
    events.upstreamFailed(status.code(), upstream.authority, cause);
  }

  /** Closes the connection, never to be reused (out of step with its framing, or failed). */
  void close() {
    responseTimer.disarm();
    if (up != null) {
      Channel u = up;
      up = null;
      u.close();
    }
  }

  /** Follows the client's writability: a client that does not read stops the upstream's reads. */
  void clientWritable(boolean writable) {
    Channel u = channel();
    if (u != null) {
      u.config().setAutoRead(writable);
    }
  }

  /** The client side is done: a connection at rest goes back to the loop's pool, else closes. */
  void release(boolean atRest) {
    released = true;
    responseTimer.stop();
    giveBack(atRest);
  }

  /**
   * Between two exchanges of a client side that waits for its next request without a
   * connection of its own (an HTTP/2 stream's, kept for the connection's next stream): the
   * connection at rest goes back to the loop's pool, where any client side takes it.
   */
  void park() {
    responseTimer.disarm();
    giveBack(true);
  }

  private void giveBack(boolean atRest) {
    if (up != null) {
      if (atRest) {
        up.config().setAutoRead(true);   // paused for a slow client: the next owner reads
        pool.giveBack(up);
      } else {
        up.close();
      }
    }
    up = null;
  }

  @Override
  public void upstreamRead(Channel u, Object msg) {
    if (u != up) {
      ReferenceCountUtil.release(msg);
      u.close();
      return;
    }
    side.read(msg);
  }

  /**
   * Bytes nobody asked for, which a side found in {@link Side#read}: the connection is out of
   * step and closes.
   */
  void unexpected(Object msg) {
    ReferenceCountUtil.release(msg);
    close();
  }

  @Override
  public void upstreamWritable(Channel u) {
    if (u == up && up.isWritable()) {
      client.resume(ReadGate.UPSTREAM);
    }
  }

  @Override
  public void upstreamClosed(Channel u) {
    if (u != up) {
      return;
    }
    up = null;
    client.resume(ReadGate.UPSTREAM);
    side.closed();
  }
}
