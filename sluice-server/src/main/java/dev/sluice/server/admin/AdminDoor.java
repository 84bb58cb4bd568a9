package dev.sluice.server.admin;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Who may ask the admin listener what. Three checks, in order, before any endpoint runs:
 *
 * <ol>
 *   <li><b>Host.</b> The {@code Host} header names this listener: the address the connection
 *   came in on (an IP literal), {@code localhost} when that address is loopback, or a name given
 *   to {@code --admin-hosts}; else {@code 421}. A page that DNS rebinding put on this address
 *   still sends its own name, so it can read nothing. The port is not compared: a tunnel to
 *   another local port ({@code ssh -L 8080:127.0.0.1:9090}) is the operator's.
 *   <li><b>Same origin.</b> A request that can change state (any method but GET and HEAD) is
 *   refused ({@code 403}) when {@code Sec-Fetch-Site} is present and not {@code same-origin}, or
 *   {@code Origin} is present and not this listener's own origin ({@code http://} or
 *   {@code https://}, and the {@code Host}); so is a {@code /v1/} read that a browser says another site sent, which could
 *   otherwise hold an event stream or the store's time. A client that is not a browser sends
 *   neither header and passes to the token check.
 *   <li><b>Token.</b> A state change under {@code /v1/} (lift, ban, reset) always needs the
 *   token ({@code 401}); when none could be set up, state changes are refused ({@code 403}).
 *   Reads under {@code /v1/} need it when the operator gave one ({@code --admin-token-file}).
 * </ol>
 *
 * <p>The probes ({@code GET /healthz}, {@code /livez}, {@code /readyz}) pass all three: they
 * change nothing, say nothing secret, and must answer a kubelet whatever {@code Host} it sends.
 */
final class AdminDoor {

  static final Set<String> PROBES = Set.of("/healthz", "/livez", "/readyz");
  /** Decisions spend quota like the gateway's requests: the read rule, not the mutation one. */
  static final String CHECK_PATH = "/v1/check";

  /**
   * What the door decided: a refusal to send and why ({@code host}, {@code cross-site},
   * {@code token}), or no refusal and the caller's auth for the log.
   */
  record Verdict(AdminAnswer refusal, String reason, String auth) {}

  private static final Verdict ANONYMOUS = new Verdict(null, null, "anonymous");

  private final Set<String> hosts;
  private final AdminToken token;
  private final boolean readsNeedToken;
  private final Verdict holder;

  /**
   * @param hosts names besides the listener's address and {@code localhost}, lower case
   * @param token the token, or null when none could be set up (state changes refused)
   * @param readsNeedToken whether {@code /v1/} reads need the token too
   */
  AdminDoor(List<String> hosts, AdminToken token, boolean readsNeedToken) {
    this.hosts = Set.copyOf(hosts);
    this.token = token;
    this.readsNeedToken = readsNeedToken && token != null;
    this.holder = token == null ? null : new Verdict(null, null, token.id());
  }

  boolean readsNeedToken() {
    return readsNeedToken;
  }

  Verdict check(AdminCall call, InetSocketAddress local) {
    String path = call.rawPath();
    boolean read = call.isRead();
    if (read && PROBES.contains(path)) {
      return ANONYMOUS;
    }
    String host = call.header("Host");
    if (host == null || host.isBlank()) {
      return refuse("host", AdminAnswer.json(400, "{\"error\":\"a Host header is required\"}"));
    }
    String name = hostName(host.strip().toLowerCase(Locale.ROOT));
    if (name == null || !ours(name, local.getAddress())) {
      return refuse("host", AdminAnswer.json(421, "{\"error\":\"misdirected request: Host "
          + quoted(host) + " is not a name of this admin listener\",\"expected\":"
          + "\"the listener's address, localhost on loopback, or a name given to "
          + "--admin-hosts\"}"));
    }
    boolean api = path.startsWith("/v1/");
    String site = call.header("Sec-Fetch-Site");
    String origin = call.header("Origin");
    if (!read || api) {
      boolean otherSite = site != null && !(site.equalsIgnoreCase("same-origin")
          || read && site.equalsIgnoreCase("none"));
      boolean otherOrigin = origin != null && !ownOrigin(origin.strip(), host.strip());
      if (otherSite || otherOrigin) {
        return refuse("cross-site", AdminAnswer.json(403, "{\"error\":\"forbidden: a cross-site request ("
            + (otherOrigin ? "Origin " + quoted(origin) : "Sec-Fetch-Site " + quoted(site))
            + "); the admin API answers only its own pages and clients that are not "
            + "browsers\"}"));
      }
    }
    if (!api) {
      return ANONYMOUS;
    }
    boolean mutation = !read && !path.equals(CHECK_PATH);
    if (!mutation && !readsNeedToken) {
      return token != null && token.accepts(call.header("Authorization")) ? holder : ANONYMOUS;
    }
    if (token == null) {
      return refuse("token", AdminAnswer.json(403, "{\"error\":\"forbidden: state changes need the "
          + "admin token, and this server has none (it could not write one at start; give "
          + "--admin-token-file)\"}"));
    }
    if (!token.accepts(call.header("Authorization"))) {
      return refuse("token", AdminAnswer.json(401, "{\"error\":\"unauthorized: send Authorization: "
          + "Bearer <token>" + (mutation ? " (every state change needs it)" : "") + "\"}")
          .with("WWW-Authenticate", "Bearer realm=\"sluice-admin\""));
    }
    return holder;
  }

  /**
   * {@code http://} and the {@code Host}, or {@code https://} and it: a proxy that ends TLS in
   * front of the listener serves the console on the same host.
   */
  private static boolean ownOrigin(String origin, String host) {
    return origin.equalsIgnoreCase("http://" + host) || origin.equalsIgnoreCase("https://" + host);
  }

  private static Verdict refuse(String reason, AdminAnswer answer) {
    return new Verdict(answer, reason, null);
  }

  private boolean ours(String name, InetAddress local) {
    if (hosts.contains(name)) {
      return true;
    }
    if (name.equals("localhost")) {
      return local.isLoopbackAddress();
    }
    InetAddress literal = literal(name);
    return literal != null && literal.equals(local);
  }

  /** The host part of a {@code Host} value (brackets kept for IPv6), or null when malformed. */
  static String hostName(String host) {
    String name = host;
    String port = null;
    if (host.startsWith("[")) {
      int close = host.indexOf(']');
      if (close < 0) {
        return null;
      }
      name = host.substring(0, close + 1);
      String rest = host.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          return null;
        }
        port = rest.substring(1);
      }
    } else {
      int colon = host.indexOf(':');
      if (colon >= 0) {
        name = host.substring(0, colon);
        port = host.substring(colon + 1);
      }
    }
    if (port != null && (port.isEmpty() || port.length() > 5
        || !port.chars().allMatch(c -> c >= '0' && c <= '9'))) {
      return null;
    }
    return name.isEmpty() ? null : name;
  }

  /**
   * An IPv4 literal (four decimal parts) or a bracketed IPv6 literal as an address, else null.
   * Nothing else reaches {@link InetAddress#getByName}, so no name is ever looked up.
   */
  static InetAddress literal(String name) {
    boolean v6 = name.startsWith("[") && name.endsWith("]") && name.length() > 2
        && name.substring(1, name.length() - 1).chars()
            .allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.');
    boolean v4 = name.matches("\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    if (v4) {
      for (String part : name.split("\\.")) {
        v4 &= Integer.parseInt(part) <= 255;
      }
    }
    if (!v4 && !v6) {
      return null;
    }
    try {
      return InetAddress.getByName(v6 ? name.substring(1, name.length() - 1) : name);
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static String quoted(String s) {
    StringBuilder sb = new StringBuilder("\\\"");
    for (int i = 0; i < s.length() && i < 80; i++) {
      char c = s.charAt(i);
      sb.append(c >= ' ' && c < 0x7f && c != '"' && c != '\\' ? c : '_');
    }
    return sb.append("\\\"").toString();
  }
}
