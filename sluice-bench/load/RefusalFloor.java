import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The floor of refusing on Netty on this machine: a server that answers every read with the same
 * 429 (no HTTP parsing, no decision, no numbers to fill in: one fixed buffer, duplicated), one
 * flush per read. Any gateway on Netty that refuses does at least this per refusal, so its CPU per
 * refusal bounds what a Netty gateway can reach against nginx refusing (gateway-bench.sh's flood
 * goal). It answers a read, not a request: for wrk's one request per connection at a time, the
 * same thing.
 *
 * <pre>
 * java -cp sluice-server/target/sluice.jar sluice-bench/load/RefusalFloor.java PORT [THREADS]
 * </pre>
 */
public final class RefusalFloor {

  /** About the size of Sluice's refusal (its head and JSON body). */
  private static final ByteBuf ANSWER = Unpooled.unreleasableBuffer(Unpooled.directBuffer()
      .writeBytes(("HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
          + "retry-after: 86400\r\nratelimit-limit: 1\r\nratelimit-remaining: 0\r\n"
          + "ratelimit-reset: 86400\r\ncontent-length: 96\r\n\r\n"
          + "{\"error\":\"too many requests\",\"retry_after_seconds\":86400,\"limit\":1,"
          + "\"remaining\":0,\"rule\":\"flood\"}").getBytes(StandardCharsets.US_ASCII)));

  public static void main(String[] args) throws InterruptedException {
    int port = Integer.parseInt(args[0]);
    int threads = args.length > 1 ? Integer.parseInt(args[1])
        : Runtime.getRuntime().availableProcessors();
    EventLoopGroup loops = new MultiThreadIoEventLoopGroup(threads, EpollIoHandler.newFactory());
    new ServerBootstrap().group(loops)
        .channel(EpollServerSocketChannel.class)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel client) {
            client.pipeline().addLast(new Refuse());
          }
        })
        .bind("127.0.0.1", port).sync().channel().closeFuture().sync();
  }

  private static final class Refuse extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ((ByteBuf) msg).release();
      ctx.write(ANSWER.duplicate());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
