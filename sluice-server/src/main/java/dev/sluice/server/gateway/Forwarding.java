package dev.sluice.server.gateway;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Rewrites headers on their way through the proxy: hop-by-hop headers are dropped, and the peer is
 * appended to {@code X-Forwarded-For} and {@code Forwarded}, never replacing what earlier proxies
 * wrote (seed 000: replacing the header in the last proxy would make every request look like it
 * came from that proxy's neighbour).
 */
final class Forwarding {

  static final AsciiString X_FORWARDED_FOR = AsciiString.cached("x-forwarded-for");
  static final AsciiString X_FORWARDED_HOST = AsciiString.cached("x-forwarded-host");
  static final AsciiString X_FORWARDED_PROTO = AsciiString.cached("x-forwarded-proto");
  static final AsciiString FORWARDED = AsciiString.cached("forwarded");
  private static final AsciiString KEEP_ALIVE = AsciiString.cached("keep-alive");
  private static final AsciiString PROXY_CONNECTION = AsciiString.cached("proxy-connection");

  private Forwarding() {}

  /** Removes the headers that describe one connection, not the message (RFC 9110, 7.6.1). */
  static void stripHopByHop(HttpHeaders h) {
    // Most requests carry no Connection header: skip building its list.
    List<String> values = h.contains(HttpHeaderNames.CONNECTION)
        ? h.getAll(HttpHeaderNames.CONNECTION) : List.of();
    List<String> named = values.isEmpty() ? List.of() : new ArrayList<>(2);
    for (String value : values) {
      for (String token : value.split(",", 16)) {
        String t = token.trim();
        if (!t.isEmpty() && t.length() < 64) {
          named.add(t);
        }
      }
    }
    for (String name : named) {
      String lower = name.toLowerCase(Locale.ROOT);
      // Never let a client strip the framing or the forwarding headers through Connection.
      if (!lower.equals("transfer-encoding") && !lower.equals("content-length")
          && !lower.startsWith("x-forwarded") && !lower.equals("forwarded")
          && !lower.equals("host")) {
        h.remove(name);
      }
    }
    h.remove(HttpHeaderNames.CONNECTION);
    h.remove(KEEP_ALIVE);
    h.remove(PROXY_CONNECTION);
    h.remove(HttpHeaderNames.TE);
    h.remove(HttpHeaderNames.TRAILER);
    h.remove(HttpHeaderNames.UPGRADE);
    h.remove(HttpHeaderNames.PROXY_AUTHENTICATE);
  }

  /**
   * Appends {@code peer} to the forwarding headers, points {@code Host} at the upstream and keeps
   * the original host in {@code X-Forwarded-Host}; {@code proto} is the client's scheme
   * ({@code http}, or {@code https} on a TLS listener).
   */
  static void forward(HttpHeaders h, String peer, String proto, String upstreamAuthority) {
    if (peer != null) {
      String xff = joined(h, X_FORWARDED_FOR);
      h.set(X_FORWARDED_FOR, xff == null ? peer : xff + ", " + peer);
      String fwd = joined(h, FORWARDED);
      String node = "for=" + node(peer) + ";proto=" + proto;
      h.set(FORWARDED, fwd == null ? node : fwd + ", " + node);
    }
    String host = h.get(HttpHeaderNames.HOST);
    if (host != null && !h.contains(X_FORWARDED_HOST)) {
      h.set(X_FORWARDED_HOST, host);
    }
    if (!h.contains(X_FORWARDED_PROTO)) {
      h.set(X_FORWARDED_PROTO, proto);
    }
    h.set(HttpHeaderNames.HOST, upstreamAuthority);
  }

  /** Every line of the header {@code name} as one comma-separated list; null when absent. */
  private static String joined(HttpHeaders h, AsciiString name) {
    if (!h.contains(name)) {
      return null;
    }
    List<String> all = h.getAll(name);
    return all.size() == 1 ? all.get(0) : String.join(", ", all);
  }

  /** An RFC 7239 node: IPv6 quoted and bracketed ({@code "[2001:db8::1]"}). */
  static String node(String ip) {
    return ip.indexOf(':') >= 0 ? "\"[" + ip + "]\"" : ip;
  }

  /** The request target in origin form, as an upstream expects it. */
  static String originForm(String uri) {
    if (uri.startsWith("/")) {
      return uri;
    }
    int scheme = uri.indexOf("://");
    if (scheme > 0) {
      int slash = uri.indexOf('/', scheme + 3);
      return slash < 0 ? "/" : uri.substring(slash);
    }
    return uri.equals("*") ? uri : "/" + uri;
  }

  /** The client socket's address as text, without an IPv6 zone. */
  static String peerIp(Channel ch) {
    if (ch.remoteAddress() instanceof InetSocketAddress inet && inet.getAddress() != null) {
      InetAddress a = inet.getAddress();
      String text = a.getHostAddress();
      int zone = text.indexOf('%');
      return zone < 0 ? text : text.substring(0, zone);
    }
    return null;
  }

  private static final byte[] X_FORWARDED_HOST_FIELD =
      "x-forwarded-host: ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] X_FORWARDED_PROTO_HTTP =
      "x-forwarded-proto: http\r\n".getBytes(StandardCharsets.US_ASCII);

  /**
   * The byte relay's request head: {@code h} as received with the same rewriting as
   * {@link #stripHopByHop} and {@link #forward} (a relayed head carries no hop-by-hop field but
   * {@code Connection: keep-alive}, dropped here). {@code host}, {@code forwardedFor} and
   * {@code forwarded} are the connection's own field lines ({@code forwardedFor} null when the
   * peer is unknown).
   */
  static HeadWriter relayHead(RequestHead h, HeadWriter w, byte[] host, byte[] forwardedFor,
      byte[] forwarded) {
    h.writeRequestLine(w);
    int hostField = -1;
    for (int i = 0; i < h.fieldCount(); i++) {
      int kind = h.kind(i);
      if (kind == RequestHead.HOST) {
        hostField = i;
      } else if (kind != RequestHead.CONNECTION && kind != RequestHead.X_FORWARDED_FOR
          && kind != RequestHead.FORWARDED) {
        h.writeField(w, i);
      }
    }
    w.put(host);
    if (forwardedFor != null) {
      String xff = h.joined(RequestHead.X_FORWARDED_FOR);
      if (xff == null) {
        w.put(forwardedFor);
      } else {
        w.field("x-forwarded-for", xff + ", " + h.peer());
      }
      String fwd = h.joined(RequestHead.FORWARDED);
      if (fwd == null) {
        w.put(forwarded);
      } else {
        w.field("forwarded", fwd + ", for=" + node(h.peer()) + ";proto=http");
      }
    }
    if (hostField >= 0 && !h.has(RequestHead.X_FORWARDED_HOST)) {
      w.put(X_FORWARDED_HOST_FIELD);
      h.writeValue(w, hostField);
      w.crlf();
    }
    if (!h.has(RequestHead.X_FORWARDED_PROTO)) {
      w.put(X_FORWARDED_PROTO_HTTP);
    }
    return w.crlf();
  }
}
