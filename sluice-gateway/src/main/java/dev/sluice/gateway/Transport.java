package dev.sluice.gateway;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.Locale;

/**
 * The socket transport of the gateway: Linux's native epoll when its library loads, Java's NIO
 * otherwise (another OS or CPU, or a JVM that may not load native code). On the 2-CPU benchmark
 * machine epoll took 0.5 to 2 microseconds less CPU per proxied request than NIO, out of about
 * 27 (docs/bench/gateway.md): no selected-key set to walk, no JDK selector locks.
 *
 * <p>{@code -Dsluice.transport=nio} forces NIO, to compare or to rule the native code out.
 */
final class Transport {

  static final String PROPERTY = "sluice.transport";

  private static final boolean EPOLL = useEpoll();

  private Transport() {}

  private static boolean useEpoll() {
    String wanted = System.getProperty(PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
    if (wanted.equals("nio")) {
      return false;
    }
    try {
      return Epoll.isAvailable();
    } catch (Throwable e) {
      // The classes or the library are missing or refused: NIO works everywhere.
      return false;
    }
  }

  /** "epoll" or "nio", for the startup log. */
  static String name() {
    return EPOLL ? "epoll" : "nio";
  }

  static IoHandlerFactory ioHandler() {
    return EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
  }

  static Class<? extends ServerChannel> serverChannel() {
    return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  static Class<? extends SocketChannel> socketChannel() {
    return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
  }
}
