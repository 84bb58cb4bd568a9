package dev.sluice.redis;

import io.lettuce.core.ConnectionBuilder;
import io.lettuce.core.ConnectionEvents;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.resolver.DefaultAddressResolverGroup;
import java.net.SocketAddress;
import java.util.Map;
import reactor.core.publisher.Mono;

/**
 * A standalone client whose connections live on one event loop that someone else owns (the
 * gateway's), instead of on the client's own I/O threads; reconnects stay on it too, since they
 * reuse the connection's bootstrap.
 *
 * <p>Why not hand Lettuce the loop through {@code ClientResources}: Lettuce takes the channel
 * class from the transports it finds on the class path (epoll when the native library loads,
 * else NIO), not from the group it is given, so a NIO loop in a process where epoll loads (the
 * gateway with {@code -Dsluice.transport=nio}) would get an epoll channel it cannot register.
 * Here the loop's own I/O type picks the channel class, and the bootstrap Lettuce configured is
 * copied onto that loop and class (its options; the handler is set after this).
 *
 * <p>Names resolve through the JDK ({@link DefaultAddressResolverGroup}), not Lettuce's DNS
 * resolver, which opens a datagram channel of Lettuce's transport on each loop it serves (an
 * epoll one cannot register on a NIO loop, and it is closed only when the loop ends). The JDK
 * resolves on the loop when a connection (re)connects, from its cache for a known name, at once
 * for an address.
 */
final class LoopClient extends RedisClient {

  private static final Class<? extends IoHandler> EPOLL_HANDLER =
      load("io.netty.channel.epoll.EpollIoHandler", IoHandler.class);
  private static final Class<? extends Channel> EPOLL_CHANNEL =
      load("io.netty.channel.epoll.EpollSocketChannel", Channel.class);

  private final EventLoop loop;
  private final Class<? extends Channel> channel;

  LoopClient(ClientResources resources, EventLoop loop) {
    super(resources, new RedisURI());
    this.loop = loop;
    this.channel = channelFor(loop);
    if (channel == null) {
      throw new IllegalArgumentException("not a NIO or epoll event loop: " + loop);
    }
  }

  EventLoop loop() {
    return loop;
  }

  /** The socket channel class for {@code loop}'s transport; null when it is neither NIO nor epoll. */
  static Class<? extends Channel> channelFor(EventLoop loop) {
    if (!(loop instanceof IoEventLoop io)) {
      return null;
    }
    if (io.isIoType(NioIoHandler.class)) {
      return NioSocketChannel.class;
    }
    if (EPOLL_HANDLER != null && EPOLL_CHANNEL != null && io.isIoType(EPOLL_HANDLER)) {
      return EPOLL_CHANNEL;
    }
    return null;
  }

  @Override
  @SuppressWarnings("unchecked")
  protected void connectionBuilder(Mono<SocketAddress> address, ConnectionBuilder builder,
      ConnectionEvents events, RedisURI uri) {
    super.connectionBuilder(address, builder, events, uri);
    // A bootstrap's group and channel class can be set only once: copy it.
    var lettuce = builder.bootstrap().config();
    Bootstrap onLoop = new Bootstrap().group(loop).channel(channel);
    for (Map.Entry<ChannelOption<?>, Object> o : lettuce.options().entrySet()) {
      onLoop.option((ChannelOption<Object>) o.getKey(), o.getValue());
    }
    onLoop.resolver(DefaultAddressResolverGroup.INSTANCE);
    builder.bootstrap(onLoop);
  }

  private static <T> Class<? extends T> load(String name, Class<T> type) {
    try {
      return Class.forName(name, false, LoopClient.class.getClassLoader()).asSubclass(type);
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }
}
