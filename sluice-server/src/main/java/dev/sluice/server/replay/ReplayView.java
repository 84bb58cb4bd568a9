package dev.sluice.server.replay;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.RequestTarget;
import dev.sluice.core.policy.RequestView;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * A logged request as the policy reads it: method, path, the headers the log has (forwarding
 * headers, User-Agent, Referer, Host), the query string, and the peer. Reused for every line;
 * the client address is resolved once per line.
 */
final class ReplayView implements RequestView {

  private static final String[] METHODS = {"GET", "POST", "HEAD", "PUT", "DELETE", "PATCH",
      "OPTIONS"};
  private static final byte[][] METHOD_BYTES = new byte[METHODS.length][];

  static {
    for (int i = 0; i < METHODS.length; i++) {
      METHOD_BYTES[i] = METHODS[i].getBytes(StandardCharsets.US_ASCII);
    }
  }

  /**
   * Targets read before, by their logged bytes: a log repeats its targets, and
   * {@link RequestTarget#parse} is a function of the text (which is a function of the bytes), so
   * a target whose bytes were read before is that same immutable target, without its string,
   * its scan and its object. Two ways of {@value #TARGET_SETS} sets, the newest first, targets of
   * at most {@value #TARGET_BYTES} bytes: about 10 MB per engine at most. The benchmark's log has
   * 4,000 distinct targets: sets that draw three or more of them miss, 8.3% of its lines in 4,096
   * sets, 2.8% in 8,192, 0.85% in 16,384 (a miss, which makes the target's string and parses it,
   * costs a few lines' time).
   */
  private static final int TARGET_SETS = 16384;
  private static final int TARGET_BYTES = 96;

  private final RequestTarget.Rules rules;
  private final int targetSets;
  private final byte[][] targetBytes;
  private final RequestTarget[] targets;
  private LogRecord r;
  private String method;
  private RequestTarget target;
  private ClientAddressResolver resolvedBy;
  private ClientAddress client;

  /** A view whose targets are read by the policy's {@code path:} rules, as the gateway's are. */
  ReplayView(RequestTarget.Rules rules) {
    this(rules, TARGET_SETS);
  }

  /** The same with {@code sets} sets of remembered targets (a power of two; tests use few). */
  ReplayView(RequestTarget.Rules rules, int sets) {
    this.rules = rules;
    this.targetSets = Integer.highestOneBit(Math.max(1, sets));
    this.targetBytes = new byte[2 * targetSets][];
    this.targets = new RequestTarget[2 * targetSets];
  }

  void reset(LogRecord record) {
    r = record;
    method = null;
    target = null;
    resolvedBy = null;
    client = null;
  }

  @Override
  public String method() {
    if (method == null) {
      for (int i = 0; i < METHODS.length; i++) {
        if (r.is(Field.METHOD, METHOD_BYTES[i])) {
          return method = METHODS[i];
        }
      }
      String m = r.get(Field.METHOD);
      method = m == null ? "GET" : m;
    }
    return method;
  }

  /** The logged target read by the one request-path rule the gateway reads it by. */
  RequestTarget target() {
    if (target == null) {
      target = cachedTarget();
      if (target == null) {
        String t = r.get(Field.TARGET);
        target = RequestTarget.parse(t == null ? "/" : t, rules);
      }
    }
    return target;
  }

  /** The cached target of the line's bytes (filled on a miss), or null when not cacheable. */
  private RequestTarget cachedTarget() {
    int i = Field.TARGET.ordinal();
    int s = r.start[i];
    int e = r.end[i];
    if (s < 0 || r.text[i] != null || e - s > TARGET_BYTES || !r.has(Field.TARGET)) {
      return null;
    }
    byte[] b = r.buf;
    int way0 = ((int) Hashes.words(b, s, e) & (targetSets - 1)) << 1;
    byte[] k = targetBytes[way0];
    if (k != null && Arrays.equals(k, 0, k.length, b, s, e)) {
      return targets[way0];
    }
    k = targetBytes[way0 + 1];
    if (k != null && Arrays.equals(k, 0, k.length, b, s, e)) {
      RequestTarget t = targets[way0 + 1];
      targetBytes[way0 + 1] = targetBytes[way0];
      targets[way0 + 1] = targets[way0];
      targetBytes[way0] = k;
      targets[way0] = t;
      return t;
    }
    RequestTarget t = RequestTarget.parse(r.get(Field.TARGET), rules);
    targetBytes[way0 + 1] = targetBytes[way0];
    targets[way0 + 1] = targets[way0];
    targetBytes[way0] = Arrays.copyOfRange(b, s, e);
    targets[way0] = t;
    return t;
  }

  /** The normalised path the gateway matched and forwarded (the logged one if it refused it). */
  @Override
  public String path() {
    RequestTarget t = target();
    if (t.ok()) {
      return t.path();
    }
    String raw = r.get(Field.TARGET);
    int q = raw == null ? -1 : raw.indexOf('?');
    return raw == null ? "/" : q < 0 ? raw : raw.substring(0, q);
  }

  @Override
  public List<String> headers(String name) {
    String v = header(name);
    return v == null ? List.of() : List.of(v);
  }

  /** Names asked, by identity: the resolver asks with the same few string constants. */
  private final java.util.IdentityHashMap<String, Field> names = new java.util.IdentityHashMap<>();

  @Override
  public String header(String name) {
    Field f = names.get(name);
    if (f == null) {
      f = field(name);
      if (names.size() < 64) {
        names.put(name, f);
      }
    }
    if (f == Field.SKIP) {
      return null;
    }
    if (f == Field.WEBSOCKET) {
      return websocketUpgrade() ? "websocket" : null;
    }
    return r.get(f);
  }

  private static Field field(String name) {
    Field f = switch (name.length()) {
      case 15 -> name.equalsIgnoreCase("X-Forwarded-For") ? Field.X_FORWARDED_FOR : null;
      case 9 -> name.equalsIgnoreCase("Forwarded") ? Field.FORWARDED
          : name.equalsIgnoreCase("X-Real-IP") ? Field.X_REAL_IP : null;
      case 10 -> name.equalsIgnoreCase("User-Agent") ? Field.USER_AGENT : null;
      case 7 -> name.equalsIgnoreCase("Referer") ? Field.REFERER
          : name.equalsIgnoreCase("Upgrade") ? Field.WEBSOCKET : null;
      case 4 -> name.equalsIgnoreCase("Host") ? Field.HOST : null;
      default -> null;
    };
    return f == null ? Field.SKIP : f;
  }

  @Override
  public String cookie(String name) {
    return null;
  }

  @Override
  public String query(String name) {
    String t = target().query();
    if (t == null) {
      return null;
    }
    int i = 0;
    while (i <= t.length()) {
      int amp = t.indexOf('&', i);
      int end = amp < 0 ? t.length() : amp;
      int eq = t.indexOf('=', i);
      int keyEnd = eq < 0 || eq > end ? end : eq;
      if (keyEnd - i == name.length() && t.startsWith(name, i)) {
        return keyEnd == end ? "" : t.substring(keyEnd + 1, end);
      }
      if (amp < 0) {
        break;
      }
      i = amp + 1;
    }
    return null;
  }

  /** The socket peer: the logged peer when the log has one apart, else the logged address. */
  @Override
  public String peer() {
    String p = r.get(Field.PEER);
    return p != null ? p : r.get(Field.ADDR);
  }

  /** Logged as an upgrade ({@code websocket}, {@code $http_upgrade}), or answered 101. */
  @Override
  public boolean websocketUpgrade() {
    return r.websocket || r.status == 101;
  }

  @Override
  public ClientAddress clientAddress(ClientAddressResolver resolver) {
    if (resolvedBy != resolver) {
      ClientAddress quick = resolver.readsHeaders() ? null : loggedIpv4();
      client = quick != null ? quick : resolver.resolve(peer(), this::headers);
      resolvedBy = resolver;
    }
    return client;
  }

  /**
   * The peer as the resolver keys it when no proxy is trusted and the line has no forwarding
   * header (with one, the resolver may warn that it ignores it: it is asked then): a plain
   * dotted quad read from the logged bytes, with the resolver's own rules (one to three digits,
   * no leading zero, at most 255), without its string; null for anything else (a port, IPv6,
   * {@code -}, escapes, a decoded JSON value), which the resolver reads.
   */
  private ClientAddress loggedIpv4() {
    if (r.has(Field.X_FORWARDED_FOR) || r.has(Field.FORWARDED) || r.has(Field.X_REAL_IP)) {
      return null;
    }
    int i = r.has(Field.PEER) ? Field.PEER.ordinal() : Field.ADDR.ordinal();
    if (r.start[i] < 0 || r.text[i] != null) {
      return null;
    }
    long v = Bytes.dottedQuad(r.buf, r.start[i], r.end[i]);
    return v < 0 ? null : ClientAddress.ipv4((int) v);
  }
}
