package dev.sluice.gateway;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.net.URI;
import java.nio.file.Path;
import java.util.Locale;
import javax.net.ssl.SSLException;

/**
 * Where the gateway forwards to: an {@code http://host:port} or {@code https://host:port} base
 * URI. Immutable. For https the connection verifies the upstream's certificate against the
 * {@code --upstream-ca} file (the JDK's trust store without one) and its host name (endpoint
 * identification "HTTPS"), sending the host (or {@code --upstream-sni}) as SNI.
 */
final class Upstream {

  static final String CA_FLAG = "--upstream-ca";

  final URI uri;
  final String host;
  final int port;
  /** The value of {@code Host} for requests sent upstream. */
  final String authority;
  /** The client TLS context for https, else null. */
  final SslContext tls;
  /** The name sent as SNI and checked against the certificate (https only). */
  final String serverName;

  private Upstream(URI uri, String host, int port, String authority, SslContext tls,
      String serverName) {
    this.uri = uri;
    this.host = host;
    this.port = port;
    this.authority = authority;
    this.tls = tls;
    this.serverName = serverName;
  }

  static Upstream of(URI uri) {
    return of(uri, null, null);
  }

  /**
   * @param caFile PEM certificates to trust for an https upstream, or null for the JDK's
   * @param sni the server name to send and verify instead of the URL's host, or null
   */
  static Upstream of(URI uri, Path caFile, String sni) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    boolean https = scheme.equals("https");
    if (!https && !scheme.equals("http")) {
      throw new IllegalArgumentException("upstream : " + uri
          + " (expected: an http:// or https:// URL like http://127.0.0.1:3000)");
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
    if (!https && (caFile != null || sni != null)) {
      throw new IllegalArgumentException((caFile != null ? CA_FLAG : "--upstream-sni")
          + " : given for " + uri + " (expected: an https:// upstream)");
    }
    int port = uri.getPort() < 0 ? (https ? 443 : 80) : uri.getPort();
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    String authority = (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host)
        + (uri.getPort() < 0 ? "" : ":" + port);
    String name = sni != null ? sni : bare;
    return new Upstream(uri, bare, port, authority, https ? client(caFile) : null,
        https ? name : null);
  }

  private static SslContext client(Path caFile) {
    SslContextBuilder b = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
        .endpointIdentificationAlgorithm("HTTPS");
    if (caFile != null) {
      b.trustManager(Pem.certificates(CA_FLAG, caFile, Pem.read(CA_FLAG, caFile)));
    }
    try {
      return b.build();
    } catch (SSLException e) {
      throw new IllegalArgumentException(CA_FLAG + " " + caFile + ": " + e.getMessage(), e);
    }
  }

  /** Puts TLS first on a new upstream connection when the upstream is https. */
  void secure(Channel ch) {
    if (tls != null) {
      ch.pipeline().addFirst("tls", tls.newHandler(ch.alloc(), serverName, port));
    }
  }

  /** The WebSocket URI scheme for this upstream. */
  String wsScheme() {
    return tls != null ? "wss" : "ws";
  }

  @Override
  public String toString() {
    return (tls != null ? "https://" : "http://") + authority;
  }
}
