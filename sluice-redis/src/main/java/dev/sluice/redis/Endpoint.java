package dev.sluice.redis;

import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed store address: {@code redis://[user:password@]host:port[/db]}, {@code rediss://...}
 * (TLS), or {@code redis-cluster://host1:port1,host2:port2} ({@code rediss-cluster://} for TLS).
 */
final class Endpoint {

  static final String EXPECTED = "expected: redis://[user:password@]host:port[/db], "
      + "rediss://..., or redis-cluster://host1:port1,host2:port2";

  private final boolean cluster;
  private final List<RedisURI> uris;
  private final String display;

  private Endpoint(boolean cluster, List<RedisURI> uris, String display) {
    this.cluster = cluster;
    this.uris = List.copyOf(uris);
    this.display = display;
  }

  static Endpoint parse(String uri) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException("uri : " + uri + " (" + EXPECTED + ")");
    }
    try {
      if (uri.startsWith("redis-cluster://") || uri.startsWith("rediss-cluster://")) {
        return parseCluster(uri);
      }
      if (!uri.startsWith("redis://") && !uri.startsWith("rediss://")) {
        throw new IllegalArgumentException("unknown scheme");
      }
      RedisURI parsed = RedisURI.create(uri);
      if (parsed.getHost() == null || parsed.getHost().isEmpty()) {
        throw new IllegalArgumentException("no host");
      }
      return new Endpoint(false, List.of(parsed), redact(uri));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "uri : \"" + redact(uri) + "\" (" + EXPECTED + "; " + e.getMessage() + ")", e);
    }
  }

  private static Endpoint parseCluster(String uri) {
    boolean tls = uri.startsWith("rediss-cluster://");
    String rest = uri.substring(uri.indexOf("://") + 3);
    String user = null;
    String password = null;
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      String info = rest.substring(0, at);
      rest = rest.substring(at + 1);
      int colon = info.indexOf(':');
      if (colon >= 0) {
        user = info.substring(0, colon);
        password = info.substring(colon + 1);
      } else {
        password = info;
      }
    }
    int slash = rest.indexOf('/');
    if (slash >= 0) {
      rest = rest.substring(0, slash);
    }
    List<RedisURI> uris = new ArrayList<>();
    for (String hostPort : rest.split(",")) {
      int colon = hostPort.lastIndexOf(':');
      if (hostPort.isBlank() || colon <= 0) {
        throw new IllegalArgumentException("'" + hostPort + "' is not host:port");
      }
      int port;
      try {
        port = Integer.parseInt(hostPort.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("'" + hostPort + "' is not host:port");
      }
      RedisURI.Builder b = RedisURI.builder().withHost(hostPort.substring(0, colon))
          .withPort(port).withSsl(tls);
      if (password != null) {
        if (user != null && !user.isEmpty()) {
          b.withAuthentication(user, password.toCharArray());
        } else {
          b.withPassword(password.toCharArray());
        }
      }
      uris.add(b.build());
    }
    return new Endpoint(true, uris, redact(uri));
  }

  /** The address with any password replaced, for logs and messages. */
  static String redact(String uri) {
    return dev.sluice.core.Secrets.mask(uri);
  }

  boolean cluster() {
    return cluster;
  }

  List<RedisURI> uris() {
    return uris;
  }

  @Override
  public String toString() {
    return display;
  }
}
