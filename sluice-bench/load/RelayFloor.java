import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;

/**
 * The floor of a Netty proxy on this machine: a blind TCP relay (no HTTP parsing, no headers
 * added, no decision), one upstream connection per client connection, bytes passed through as
 * the buffers Netty read them into, one flush per read burst. Any HTTP proxy on Netty does at
 * least this much work per request, so its CPU per request bounds what a Netty gateway can reach
 * against nginx (gateway-bench.sh target "netty-relay").
 *
 * <pre>
 * java -cp sluice-server/target/sluice.jar sluice-bench/load/RelayFloor.java PORT UPSTREAM_PORT [THREADS]
 * </pre>
 */
public final class RelayFloor {

  public static void main(String[] args) throws InterruptedException {
    int port = Integer.parseInt(args[0]);
    int upstream = Integer.parseInt(args[1]);
    // One loop per core, as sluice serve has by default.
    int threads = args.length > 2 ? Integer.parseInt(args[2])
        : Runtime.getRuntime().availableProcessors();
    EventLoopGroup loops = new MultiThreadIoEventLoopGroup(threads, EpollIoHandler.newFactory());
    new ServerBootstrap().group(loops)
        .channel(EpollServerSocketChannel.class)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.AUTO_READ, false)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel client) {
            Channel up = new Bootstrap().group(client.eventLoop())
                .channel(EpollSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new Relay(client))
                .connect("127.0.0.1", upstream)
                .addListener(f -> {
                  if (f.isSuccess()) {
                    client.config().setAutoRead(true);
                  } else {
                    client.close();
                  }
                }).channel();
            client.pipeline().addLast(new Relay(up));
          }
        })
        .bind("127.0.0.1", port).sync().channel().closeFuture().sync();
  }

  private static final class Relay extends ChannelInboundHandlerAdapter {
    private final Channel peer;

    Relay(Channel peer) {
      this.peer = peer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      peer.write(msg, peer.voidPromise());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      peer.flush();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      peer.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
