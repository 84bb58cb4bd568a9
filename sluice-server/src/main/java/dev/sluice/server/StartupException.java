package dev.sluice.server;

import java.net.InetSocketAddress;
import java.nio.channels.UnresolvedAddressException;
import java.util.Locale;

/**
 * A listener that could not start, told as the flag that asked for it, the address and the cause:
 * {@code --admin 127.0.0.1:9090: address already in use}. Without the flag and the address an
 * operator cannot tell which of two listeners failed, nor what to change.
 */
final class StartupException extends Exception {

  private static final long serialVersionUID = 1L;

  StartupException(String flag, InetSocketAddress address, Throwable cause) {
    super(flag + " " + text(address) + ": " + describe(address, cause), cause);
  }

  /** {@code host:port} as given, IPv6 in brackets. */
  static String text(InetSocketAddress a) {
    String host = a.getHostString();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  /**
   * What went wrong, from the innermost cause that says: Netty's native transport reports a bind
   * failure as {@code bind(..) failed with error(-98): Address already in use}, NIO as a
   * {@code BindException}, an unresolvable host as a message-less
   * {@link UnresolvedAddressException}.
   */
  static String describe(InetSocketAddress address, Throwable cause) {
    if (address.isUnresolved()) {
      return "cannot resolve host " + address.getHostString();
    }
    if (cause == null) {
      return "cannot start";
    }
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof UnresolvedAddressException) {
        return "cannot resolve host " + address.getHostString();
      }
      String m = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
      if (m.contains("address already in use")) {
        return "address already in use (another process listens there; pick another port)";
      }
      if (m.contains("cannot assign requested address")) {
        return "address not available (no network interface on this host has it)";
      }
      if (m.contains("permission denied")) {
        return "permission denied (ports below 1024 need privileges)";
      }
    }
    Throwable root = cause;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.getClass().getSimpleName()
        : root.getClass().getSimpleName() + ": " + root.getMessage();
  }
}
