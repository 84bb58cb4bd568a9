package dev.sluice.gateway;

import dev.sluice.core.RateLimiter;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.core.policy.Policy;
import dev.sluice.policy.PolicyConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * The relay of {@code sluice serve} on an embedded channel, for the benchmarks of what it answers
 * by itself: a policy on the memory store, an upstream nobody listens on (nothing is forwarded),
 * pooled buffers, and one request sent again and again.
 */
final class RelayChannel implements AutoCloseable {

  private final EmbeddedChannel channel;
  private final ByteBuf request;

  RelayChannel(Policy policy, String request) {
    PolicyConfig config = PolicyConfig.of(policy);
    RateLimiter limiter = RateLimiter.of(Store.memory(Ticker.system(), 100_000));
    Snapshot.Source snapshots = new Snapshot.Source(() -> config, limiter, GatewayEvents.none());
    Upstream up = Upstream.of(URI.create("http://127.0.0.1:9"));
    channel = new EmbeddedChannel(new RelayHandler(snapshots, GatewayEvents.none(), up,
        new UpstreamPool(up), null, "http", (p, u) -> { }));
    channel.config().setAllocator(PooledByteBufAllocator.DEFAULT);
    byte[] bytes = request.getBytes(StandardCharsets.US_ASCII);
    this.request = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
  }

  /** Sends the request once; the length of the answer it got. */
  int send() {
    // As an event loop reads (writeInbound's varargs array would be the benchmark's own bytes).
    channel.pipeline().fireChannelRead(request.retainedDuplicate()).fireChannelReadComplete();
    channel.runPendingTasks();
    ByteBuf answer = channel.readOutbound();
    int n = answer.readableBytes();
    answer.release();
    return n;
  }

  @Override
  public void close() {
    channel.finishAndReleaseAll();
    request.release();
  }
}
