package dev.sluice.gateway;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayDeque;
import javax.net.ssl.SSLException;

/**
 * HTTP connections to the upstream, one pool for the whole gateway. A client connection keeps the
 * one it got while it lives; when it closes, a kept-alive upstream connection goes back to an idle
 * pool of its event loop (at most {@value #MAX_IDLE} per loop), and the next client connection on
 * that loop takes it instead of connecting. Every upstream connection lives on its client's event
 * loop, so a request and its response never change threads. Connections carry bytes: every
 * exchange, whatever its client's protocol, speaks HTTP/1.1 to the upstream as bytes.
 */
final class UpstreamPool {

  static final int MAX_IDLE = 64;
  /** The name of the handler that hands a connection's events to its owner. */
  private static final String OWNER = "owner";

  /** What an upstream connection reports to; a pooled one has none. */
  interface Owner {
    void upstreamRead(Channel up, Object msg);

    void upstreamWritable(Channel up);

    void upstreamClosed(Channel up);
  }

  private final Upstream upstream;
  private final FastThreadLocal<ArrayDeque<Channel>> idle = new FastThreadLocal<>() {
    @Override
    protected ArrayDeque<Channel> initialValue() {
      return new ArrayDeque<>();
    }
  };

  UpstreamPool(Upstream upstream) {
    this.upstream = upstream;
  }

  /** An idle connection of {@code loop} handed to {@code owner}, or null. On the loop only. */
  Channel take(EventLoop loop, Owner owner) {
    ArrayDeque<Channel> q = idle.get();
    Channel c;
    while ((c = q.pollLast()) != null) {
      if (c.isActive() && c.eventLoop() == loop) {
        Handler h = handler(c);
        h.owner = owner;
        return c;
      }
      c.close();
    }
    return null;
  }

  /** Parks {@code up} (a kept-alive connection with no exchange in flight), or closes it. */
  void giveBack(Channel up) {
    handler(up).owner = null;
    ArrayDeque<Channel> q = idle.get();
    if (!up.isActive() || q.size() >= MAX_IDLE) {
      up.close();
      return;
    }
    q.add(up);
  }

  /** Opens a connection on {@code loop} for {@code owner}. */
  ChannelFuture connect(EventLoop loop, Snapshot snap, Owner owner) {
    Handler handler = new Handler(owner);
    return open(bootstrap(loop, snap, new ChannelInitializer<SocketChannel>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.pipeline().addLast(OWNER, handler);
        upstream.secure(ch);
      }
    }), upstream);
  }

  /**
   * Connects {@code b} to {@code upstream}; for https the future completes once the TLS handshake
   * has (so a refused certificate is the connection's failure, with its cause for the log).
   */
  static ChannelFuture open(Bootstrap b, Upstream upstream) {
    ChannelFuture connected = b.connect(upstream.host, upstream.port);
    if (upstream.tls == null) {
      return connected;
    }
    ChannelPromise ready = connected.channel().newPromise();
    connected.addListener((ChannelFutureListener) f -> {
      if (!f.isSuccess()) {
        ready.tryFailure(f.cause());
        return;
      }
      f.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(h -> {
        if (h.isSuccess()) {
          ready.trySuccess();
        } else {
          ready.tryFailure(new SSLException("TLS handshake with " + upstream.serverName
              + " failed (" + rootMessage(h.cause()) + ")", h.cause()));
          f.channel().close();
        }
      });
    });
    return ready;
  }

  /** The innermost cause's message, as one clause (the log keeps what precedes a ": "). */
  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return m.replace(": ", " ");
  }

  static Bootstrap bootstrap(EventLoop loop, Snapshot snap,
      ChannelInitializer<SocketChannel> init) {
    long connectMillis = Math.max(1, snap.gateway.upstreamConnectTimeout().toMillis());
    return new Bootstrap().group(loop).channel(Transport.socketChannel())
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
            (int) Math.min(Integer.MAX_VALUE, connectMillis))
        .option(ChannelOption.TCP_NODELAY, true)
        .handler(init);
  }

  private static Handler handler(Channel up) {
    return up.pipeline().get(Handler.class);
  }

  /** Hands an upstream connection's events to its current owner. */
  private final class Handler extends ChannelInboundHandlerAdapter {
    Owner owner;

    Handler(Owner owner) {
      this.owner = owner;
    }

    @Override
    public void channelRead(ChannelHandlerContext uctx, Object msg) {
      if (owner == null) {
        // An idle connection has nothing to say: whatever comes, it is not reusable.
        ReferenceCountUtil.release(msg);
        uctx.close();
        return;
      }
      owner.upstreamRead(uctx.channel(), msg);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext uctx) {
      if (owner != null) {
        owner.upstreamWritable(uctx.channel());
      }
      uctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext uctx) {
      if (owner != null) {
        owner.upstreamClosed(uctx.channel());
      } else {
        idle.get().remove(uctx.channel());
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext uctx, Throwable cause) {
      uctx.close();
    }
  }
}
