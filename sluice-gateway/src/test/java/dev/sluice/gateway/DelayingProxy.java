package dev.sluice.gateway;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A TCP forwarder on loopback that delays every chunk by a fixed time in each direction, as a
 * Redis across a slow network would be. One event loop thread carries every connection, and
 * each chunk's write is a task scheduled {@code delay} after it was read: tasks with the same
 * delay run in the order they were scheduled, so nothing is reordered. A close travels with
 * the same delay, behind the data before it.
 */
public final class DelayingProxy implements AutoCloseable {

  private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1,
      NioIoHandler.newFactory());
  private final Channel server;
  private final long delayNanos;

  public DelayingProxy(int targetPort, Duration delay) throws InterruptedException {
    this.delayNanos = delay.toNanos();
    InetSocketAddress target = new InetSocketAddress(InetAddress.getLoopbackAddress(),
        targetPort);
    server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
        .childOption(ChannelOption.AUTO_READ, false)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel front) {
            front.pipeline().addLast(new Front(target));
          }
        })
        .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
  }

  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** The client's side: connects to the target, then relays both ways with the delay. */
  private final class Front extends ChannelInboundHandlerAdapter {
    private final InetSocketAddress target;
    private Channel back;

    Front(InetSocketAddress target) {
      this.target = target;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      Channel front = ctx.channel();
      new Bootstrap().group(front.eventLoop()).channel(NioSocketChannel.class)
          .option(ChannelOption.TCP_NODELAY, true)
          .handler(new Delayed(front))
          .connect(target).addListener(f -> {
            if (f.isSuccess()) {
              back = ((io.netty.channel.ChannelFuture) f).channel();
              front.config().setAutoRead(true);
              front.read();
            } else {
              front.close();
            }
          });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      later(ctx, () -> {
        if (back.isActive()) {
          back.writeAndFlush(msg);
        } else {
          ReferenceCountUtil.release(msg);
        }
      });
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (back != null) {
        later(ctx, back::close);
      }
    }
  }

  /** The target's side: relays to the client with the delay. */
  private final class Delayed extends ChannelInboundHandlerAdapter {
    private final Channel front;

    Delayed(Channel front) {
      this.front = front;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      later(ctx, () -> {
        if (front.isActive()) {
          front.writeAndFlush(msg);
        } else {
          ReferenceCountUtil.release(msg);
        }
      });
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      later(ctx, front::close);
    }
  }

  private void later(ChannelHandlerContext ctx, Runnable task) {
    ctx.executor().schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
