package dev.sluice.server.gateway;

import java.net.URI;
import java.util.Locale;

/** Where the gateway forwards to: an {@code http://host:port} base URI. Immutable. */
final class Upstream {

  final URI uri;
  final String host;
  final int port;
  /** The value of {@code Host} for requests sent upstream. */
  final String authority;

  private Upstream(URI uri, String host, int port, String authority) {
    this.uri = uri;
    this.host = host;
    this.port = port;
    this.authority = authority;
  }

  static Upstream of(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http")) {
      throw new IllegalArgumentException("upstream : " + uri
          + " (expected: an http:// URL; terminate TLS in front of the upstream or use a local"
          + " sidecar)");
    }
    String host = uri.getHost();
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("upstream : " + uri + " (expected: a host, like "
          + "http://127.0.0.1:3000)");
    }
    if (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/")) {
      throw new IllegalArgumentException("upstream : " + uri
          + " (expected: no path; requests keep their own path)");
    }
    int port = uri.getPort() < 0 ? 80 : uri.getPort();
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    String authority = (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host)
        + (uri.getPort() < 0 ? "" : ":" + port);
    return new Upstream(uri, bare, port, authority);
  }

  @Override
  public String toString() {
    return "http://" + authority;
  }
}
