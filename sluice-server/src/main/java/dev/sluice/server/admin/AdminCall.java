package dev.sluice.server.admin;

import java.net.InetSocketAddress;
import java.util.function.Function;

/**
 * One admin request, read whole: its method, raw path and query (percent-encoding kept, see
 * {@link AdminRequest}), its headers by name, its body (at most {@link AdminServer#MAX_BODY}
 * bytes) and the TCP peer.
 */
public final class AdminCall {

  private final String method;
  private final String rawPath;
  private final String rawQuery;
  private final Function<String, String> headers;
  private final byte[] body;
  private final InetSocketAddress peer;

  AdminCall(String method, String rawPath, String rawQuery, Function<String, String> headers,
      byte[] body, InetSocketAddress peer) {
    this.method = method;
    this.rawPath = rawPath;
    this.rawQuery = rawQuery;
    this.headers = headers;
    this.body = body;
    this.peer = peer;
  }

  public String method() {
    return method;
  }

  /** The path as sent, before percent-decoding. */
  public String rawPath() {
    return rawPath;
  }

  /** The query as sent, or null when there is none. */
  public String rawQuery() {
    return rawQuery;
  }

  /** The first value of header {@code name} (any case), or null. */
  public String header(String name) {
    return headers.apply(name);
  }

  public byte[] body() {
    return body.clone();
  }

  public InetSocketAddress peer() {
    return peer;
  }

  boolean isRead() {
    return method.equals("GET") || method.equals("HEAD");
  }
}
