package dev.sluice.gateway;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The one table of the headers a proxy rewrites, and the rewriting, for the byte relay
 * ({@link #requestHead}) and for the Netty objects of HTTP/2 streams and WebSocket upgrades
 * ({@link #stripHopByHop}, {@link #forward}).
 *
 * <ul>
 *   <li>Hop-by-hop fields describe one connection, not the message (RFC 9110, 7.6.1):
 *       {@code Connection} and the fields it names, {@code Keep-Alive},
 *       {@code Proxy-Connection}, {@code TE}, {@code Trailer}, {@code Upgrade}; responses also
 *       lose {@code Proxy-Authenticate}. A client can never strip the framing, the forwarding
 *       fields or {@code Host} by naming them in {@code Connection}.
 *   <li>Forwarding fields ({@link #FORWARDING}) say who the client is. From a peer the policy
 *       does not trust as a proxy ({@code trust:}), they are whatever the client chose: all are
 *       removed, and the gateway sets its own ({@code X-Forwarded-For} and {@code X-Real-IP}
 *       the peer, {@code Forwarded} {@code for} and {@code proto}, {@code X-Forwarded-Host} the
 *       client's {@code Host}, {@code X-Forwarded-Proto} the listener's scheme). From a trusted
 *       proxy they are kept, and the peer is appended to {@code X-Forwarded-For} and
 *       {@code Forwarded}, never replacing what earlier proxies wrote (seed 000: replacing the
 *       header in the last proxy would make every request look like it came from that proxy's
 *       neighbour). Other headers CDNs use to name the client ({@code trust.clientHeaders}:
 *       {@code True-Client-IP}, {@code CF-Connecting-IP}...) are removed from an untrusted
 *       peer and kept from a trusted one.
 * </ul>
 */
final class Forwarding {

  /** Request fields that are hop-by-hop besides {@code Connection} and {@code Upgrade}. */
  static final List<String> HOP_BY_HOP_REQUEST =
      List.of("keep-alive", "proxy-connection", "te", "trailer");
  /** Response fields that are hop-by-hop besides {@code Connection}. */
  static final List<String> HOP_BY_HOP_RESPONSE =
      List.of("keep-alive", "proxy-connection", "te", "trailer", "upgrade", "proxy-authenticate");
  /** The forwarding fields, in the order {@link RequestHead} numbers them. */
  static final List<String> FORWARDING = List.of("x-forwarded-for", "x-forwarded-host",
      "x-forwarded-proto", "x-forwarded-port", "forwarded", "x-real-ip");

  private static final int XFF = RequestHead.forwardingKind("x-forwarded-for");
  private static final int XFH = RequestHead.forwardingKind("x-forwarded-host");
  private static final int XFP = RequestHead.forwardingKind("x-forwarded-proto");
  private static final int FWD = RequestHead.forwardingKind("forwarded");
  private static final int REAL_IP = RequestHead.forwardingKind("x-real-ip");

  private Forwarding() {}

  /**
   * The client's side of the rewriting: who the peer is, whether it is a trusted proxy, and its
   * RFC 7239 {@code for} and {@code proto} element (made once per connection).
   */
  record Peer(String ip, boolean trusted, String proto, String forwardedElement) {
    Peer(String ip, boolean trusted, String proto) {
      this(ip, trusted, proto, ip == null ? null : "for=" + node(ip) + ";proto=" + proto);
    }
  }

  /**
   * The relay's request head as forwarded: the method, {@code target} (normalised) and version,
   * the end-to-end fields as received (but {@code clientHeaders}, lower-case names, from an
   * untrusted peer), {@code Host} the upstream, and the forwarding fields as the class comment
   * says.
   */
  static HeadWriter requestHead(RequestHead h, String target, HeadWriter w,
      String upstreamAuthority, Peer peer, byte[][] clientHeaders) {
    h.writeMethod(w);
    w.put(" ").put(target).put(h.http10() ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    boolean trusted = peer.trusted();
    for (int i = 0; i < h.fieldCount(); i++) {
      if (h.endToEnd(i)) {
        if (trusted || !h.named(i, clientHeaders)) {
          h.writeField(w, i);
        }
      } else if (trusted && h.forwarding(i) && h.kind(i) != XFF && h.kind(i) != FWD) {
        h.writeField(w, i);
      }
    }
    w.put("host: ").put(upstreamAuthority).crlf();
    if (h.http10() && h.keepAlive()) {
      w.put("connection: keep-alive\r\n");
    }
    if (peer.ip() == null) {
      return w.crlf();
    }
    String xff = trusted ? h.joined(XFF) : null;
    w.put("x-forwarded-for: ").put(xff == null ? peer.ip() : xff + ", " + peer.ip()).crlf();
    String fwd = trusted ? h.joined(FWD) : null;
    w.put("forwarded: ").put(fwd == null ? peer.forwardedElement()
        : fwd + ", " + peer.forwardedElement()).crlf();
    if (!(trusted && h.joined(XFH) != null) && h.hasHost()) {
      w.put("x-forwarded-host: ");
      h.writeHost(w);
      w.crlf();
    }
    if (!(trusted && h.joined(XFP) != null)) {
      w.put("x-forwarded-proto: ").put(peer.proto()).crlf();
    }
    if (!(trusted && h.joined(REAL_IP) != null)) {
      w.put("x-real-ip: ").put(peer.ip()).crlf();
    }
    return w.crlf();
  }

  /** Removes the hop-by-hop headers of a Netty message (the class comment's list). */
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
      if (!lower.equals("transfer-encoding") && !lower.equals("content-length")
          && !FORWARDING.contains(lower) && !lower.equals("host")) {
        h.remove(name);
      }
    }
    h.remove(HttpHeaderNames.CONNECTION);
    for (String name : HOP_BY_HOP_RESPONSE) {
      h.remove(name);
    }
  }

  /**
   * Rewrites the forwarding headers of a Netty request as {@link #requestHead} does, and points
   * {@code Host} at the upstream.
   */
  static void forward(HttpHeaders h, Peer peer, String upstreamAuthority,
      List<String> clientHeaders) {
    String host = h.get(HttpHeaderNames.HOST);
    if (peer.ip() != null) {
      String xff = peer.trusted() ? joined(h, "x-forwarded-for") : null;
      String fwd = peer.trusted() ? joined(h, "forwarded") : null;
      boolean keepHost = peer.trusted() && h.contains("x-forwarded-host");
      boolean keepProto = peer.trusted() && h.contains("x-forwarded-proto");
      boolean keepRealIp = peer.trusted() && h.contains("x-real-ip");
      if (!peer.trusted()) {
        for (String name : FORWARDING) {
          h.remove(name);
        }
        for (String name : clientHeaders) {
          h.remove(name);
        }
      }
      h.set("x-forwarded-for", xff == null ? peer.ip() : xff + ", " + peer.ip());
      h.set("forwarded", fwd == null ? peer.forwardedElement()
          : fwd + ", " + peer.forwardedElement());
      if (!keepHost && host != null) {
        h.set("x-forwarded-host", host);
      }
      if (!keepProto) {
        h.set("x-forwarded-proto", peer.proto());
      }
      if (!keepRealIp) {
        h.set("x-real-ip", peer.ip());
      }
    }
    h.set(HttpHeaderNames.HOST, upstreamAuthority);
  }

  /** Every line of the header {@code name} as one comma-separated list; null when absent. */
  private static String joined(HttpHeaders h, String name) {
    if (!h.contains(name)) {
      return null;
    }
    List<String> all = h.getAll(name);
    return all.size() == 1 ? all.get(0) : String.join(", ", all);
  }

  /** The peer of {@code ch} (a connection, or an HTTP/2 stream's), as {@code snap} trusts it. */
  static Peer peer(Channel ch, Snapshot snap, String proto) {
    InetAddress address = ch.remoteAddress() instanceof InetSocketAddress inet
        ? inet.getAddress() : null;
    return new Peer(peerIp(ch), snap.config.policy().clientAddress().trustsPeer(address), proto);
  }

  /** An RFC 7239 node: IPv6 quoted and bracketed ({@code "[2001:db8::1]"}). */
  static String node(String ip) {
    return ip.indexOf(':') >= 0 ? "\"[" + ip + "]\"" : ip;
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
}
