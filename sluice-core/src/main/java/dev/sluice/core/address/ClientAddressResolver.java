package dev.sluice.core.address;

import dev.sluice.core.internal.Checks;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Turns a request's socket peer and forwarding headers into the client address used as a
 * rate-limit key. Immutable and thread-safe; build one with {@link #builder()} or use
 * {@link #direct()}.
 *
 * <h2>Why the chain is read from the right</h2>
 * Each proxy appends the address it received the connection from, so the left part of
 * {@code X-Forwarded-For} is whatever the client chose to send and only the right part can be
 * believed. With one trusted proxy ({@code trustedHops(1)}), a client at 7.7.7.7 that sends
 * {@code X-Forwarded-For: a.a.a.a} arrives as {@code a.a.a.a, 7.7.7.7}: the key is the last entry,
 * 7.7.7.7. Keying on the left-most entry instead hands the attacker the key: three requests carrying
 * {@code a.a.a.a}, {@code b.b.b.b}, {@code c.c.c.c} would land in three buckets, and a limit of 2 would
 * never refuse the third. Read from the right, all three are 7.7.7.7 and the third is refused.
 *
 * <h2>Modes</h2>
 * <ul>
 *   <li><b>No proxy trusted</b> (the default, {@link #direct()}): the socket peer, always. Forwarding
 *       headers are ignored, and the first time one arrives a single warning is logged per process.
 *   <li><b>{@code trustedHops(n)}</b>: the n-th header entry from the right (n = 1: the entry the one
 *       trusted proxy appended). A chain shorter than n means the request did not pass through all
 *       n proxies, so the socket peer is used.
 *   <li><b>{@code trustedProxies(cidrs)}</b>: headers are read only when the socket peer is trusted;
 *       entries are walked from the right while they are trusted, and the first untrusted one is the
 *       client. If every entry is trusted the left-most one is the client. An entry that is not an
 *       address (garbage, {@code unknown}, an obfuscated RFC 7239 identifier) ends the walk and the
 *       client is the unknown bucket: the walk cannot know whether that hop was a trusted proxy,
 *       and guessing either way would let the hop's sender pick the key.
 * </ul>
 *
 * <h2>Which header</h2>
 * The first enabled one present, in this order: {@code Forwarded} (RFC 7239, its {@code for=}
 * parameters), {@code X-Forwarded-For}, {@code X-Real-IP} (one value, a chain of one entry). Only
 * {@code X-Forwarded-For} is enabled by default, the header nearly every proxy appends to; enable
 * another only if your proxy writes (and overwrites) it, because a client can send any header
 * itself and one the proxy passes through untouched is read as if the proxy had written it.
 *
 * <h2>Keys</h2>
 * IPv4 as a dotted quad ({@code 1.2.3.4}, also for IPv4-mapped IPv6). IPv6 as its network of
 * {@code ipv6Prefix} bits in RFC 5952 form with the prefix ({@code 2001:db8:1:2::/64}), because a
 * single subscriber usually holds a whole /64, i.e. 2^64 addresses to rotate through. Anything that
 * is not an address literal (host names are never looked up) gives the unknown bucket, which all
 * such requests share.
 *
 * <h2>Bounds</h2>
 * Per request at most the right-most 8 KiB of a header ({@value #MAX_HEADER_CHARS} characters,
 * counted over all its lines, plus one per line) and at most {@value #MAX_HOPS} entries are
 * examined; the hostile part of a chain is on the left, so that is the part dropped. If the entry
 * needed lies beyond either bound, or a proxy walk is still on trusted entries when it reaches
 * one, the result is the unknown bucket. {@code trustedHops} is therefore limited to
 * {@value #MAX_HOPS}.
 */
public final class ClientAddressResolver {

  static final int MAX_HEADER_CHARS = 8 * 1024;
  static final int MAX_HOPS = 64;

  static final String IGNORED_HEADERS_WARNING = "forwarded headers ignored because no proxy is trusted; "
      + "set TRUST_PROXY=<hops> or TRUSTED_PROXIES=<cidrs> if sluice runs behind a proxy, otherwise "
      + "leave it: trusting them on a directly exposed server lets any caller choose its own rate-limit key";

  private static final System.Logger LOG = System.getLogger(ClientAddressResolver.class.getName());
  private static final AtomicBoolean WARNED = new AtomicBoolean();
  private static final AtomicInteger WARNINGS = new AtomicInteger();
  private static final ClientAddressResolver DIRECT = new Builder().build();

  private final int trustedHops;
  private final Cidr[] trustedProxies;
  private final int ipv6Prefix;
  private final String unknownBucket;
  private final ClientAddress unknown;
  private final boolean forwarded;
  private final boolean xForwardedFor;
  private final boolean xRealIp;

  private ClientAddressResolver(Builder b) {
    this.trustedHops = b.trustedHops;
    this.trustedProxies = b.trustedProxies.toArray(new Cidr[0]);
    this.ipv6Prefix = b.ipv6Prefix;
    this.unknownBucket = b.unknownBucket;
    this.unknown = ClientAddress.unknown(b.unknownBucket);
    this.forwarded = b.forwarded;
    this.xForwardedFor = b.xForwardedFor;
    this.xRealIp = b.xRealIp;
  }

  /** A builder with the defaults of {@link #direct()}: no proxy trusted, /64 for IPv6, bucket {@code unknown}. */
  public static Builder builder() {
    return new Builder();
  }

  /** The resolver for a server that clients reach directly: the socket peer, forwarding headers ignored. */
  public static ClientAddressResolver direct() {
    return DIRECT;
  }

  /**
   * The rate-limit key of a request's client.
   *
   * @param peer the socket peer's address text; may be null, bracketed ({@code [::1]}), carry a
   *     port, a zone ({@code fe80::1%eth0}) or the leading {@code /} of {@code InetSocketAddress}
   * @param headers header name to all its values in arrival order, one per header line; null or
   *     an empty list when absent. A header is asked for by its wire name ({@link Header#headerName()},
   *     {@code X-Forwarded-For}), then, when that gives nothing, in lower case ({@code
   *     x-forwarded-for}, as HTTP/2 sends it) and in upper case: a function that is itself
   *     case-insensitive (Netty's, the Servlet API's) answers the first, and a plain map keyed by
   *     any of the three spellings works too
   * @return the address ({@code 1.2.3.4}, {@code 2001:db8:1:2::/64}), or the unknown bucket;
   *     never throws
   */
  public ClientAddress resolve(String peer, Function<String, List<String>> headers) {
    try {
      return resolve(parsePeer(peer), headers);
    } catch (RuntimeException e) {
      return unknown;
    }
  }

  /**
   * The same for a socket peer given as an address, as a server holds it: no text is formatted
   * or parsed.
   */
  public ClientAddress resolvePeer(InetAddress peer, Function<String, List<String>> headers) {
    try {
      return resolve(peer == null ? null : InetLiteral.foldMapped(peer.getAddress()), headers);
    } catch (RuntimeException e) {
      return unknown;
    }
  }

  private ClientAddress resolve(byte[] peerAddr, Function<String, List<String>> headers) {
    try {
      if (trustedHops == 0 && trustedProxies.length == 0) {
        warnIfForwarded(headers);
        return key(peerAddr);
      }
      if (headers == null || (trustedHops == 0 && !isTrusted(peerAddr))) {
        return key(peerAddr);
      }
      ForwardedChain chain = chain(headers);
      if (chain == null) {
        return key(peerAddr);
      }
      return trustedHops > 0 ? byHops(chain, peerAddr) : byWalk(chain, peerAddr);
    } catch (RuntimeException e) {
      // a throwing header function or an unforeseen input must not fail the request
      return unknown;
    }
  }

  /**
   * False when no proxy is trusted: every request's key is then its socket peer's address, the
   * forwarding headers are never read for it (only for the one warning that they are ignored).
   * Lets a caller holding the peer in another form (a replayed log's bytes) key it itself.
   */
  public boolean readsHeaders() {
    return trustedHops > 0 || trustedProxies.length > 0;
  }

  /**
   * Whether forwarding headers from {@code peer} are a proxy's, not a client's: always with
   * trusted hops (the operator says a proxy sits in front), else when the peer is one of the
   * trusted proxies. A gateway removes the forwarding headers of a peer it does not trust.
   */
  public boolean trustsPeer(InetAddress peer) {
    if (trustedHops > 0) {
      return true;
    }
    if (trustedProxies.length == 0 || peer == null) {
      return false;
    }
    try {
      return isTrusted(InetLiteral.foldMapped(peer.getAddress()));
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public String toString() {
    return "ClientAddressResolver{trustedHops=" + trustedHops
        + ", trustedProxies=" + Arrays.toString(trustedProxies)
        + ", ipv6Prefix=" + ipv6Prefix
        + ", unknownBucket=" + unknownBucket
        + ", headers=" + (forwarded ? "[FORWARDED" : "[") + (xForwardedFor ? " X_FORWARDED_FOR" : "")
        + (xRealIp ? " X_REAL_IP" : "") + "]}";
  }

  /** How many times the ignored-headers warning has been logged; at most once per process unless reset. */
  static int ignoredHeadersWarnings() {
    return WARNINGS.get();
  }

  /** Lets a test observe the first warning again. */
  static void resetIgnoredHeadersWarning() {
    WARNED.set(false);
    WARNINGS.set(0);
  }

  private ClientAddress byHops(ForwardedChain chain, byte[] peerAddr) {
    for (int n = 1; chain.next(); n++) {
      if (n == trustedHops) {
        return key(chain.address());
      }
    }
    return chain.truncated ? unknown : key(peerAddr);
  }

  private ClientAddress byWalk(ForwardedChain chain, byte[] peerAddr) {
    byte[] leftmost = peerAddr;
    while (chain.next()) {
      byte[] a = chain.address();
      if (!isTrusted(a)) {
        return key(a); // null (not an address) gives the unknown bucket
      }
      leftmost = a;
    }
    return chain.truncated ? unknown : key(leftmost);
  }

  private ForwardedChain chain(Function<String, List<String>> headers) {
    List<String> lines;
    if (forwarded && isPresent(lines = lookup(headers, Header.FORWARDED))) {
      return new ForwardedChain(lines, true, false);
    }
    if (xForwardedFor && isPresent(lines = lookup(headers, Header.X_FORWARDED_FOR))) {
      return new ForwardedChain(lines, false, false);
    }
    if (xRealIp && isPresent(lines = lookup(headers, Header.X_REAL_IP))) {
      return new ForwardedChain(lines, false, true);
    }
    return null;
  }

  /**
   * The header's lines under its wire name, else its lower-case, else its upper-case spelling.
   * HTTP header names are case-insensitive, but a function can only be asked, not searched; the
   * spellings are constants, so a lookup allocates nothing.
   */
  private static List<String> lookup(Function<String, List<String>> headers, Header h) {
    List<String> lines = headers.apply(h.headerName);
    if (isPresent(lines)) {
      return lines;
    }
    lines = headers.apply(h.lowerCase);
    return isPresent(lines) ? lines : headers.apply(h.upperCase);
  }

  private void warnIfForwarded(Function<String, List<String>> headers) {
    if (WARNED.get() || headers == null) {
      return;
    }
    try {
      if ((forwarded && isPresent(lookup(headers, Header.FORWARDED)))
          || (xForwardedFor && isPresent(lookup(headers, Header.X_FORWARDED_FOR)))
          || (xRealIp && isPresent(lookup(headers, Header.X_REAL_IP)))) {
        if (WARNED.compareAndSet(false, true)) {
          WARNINGS.incrementAndGet();
          LOG.log(System.Logger.Level.WARNING, IGNORED_HEADERS_WARNING);
        }
      }
    } catch (RuntimeException e) {
      // the warning is advice; the peer is the answer either way
    }
  }

  private boolean isTrusted(byte[] addr) {
    for (Cidr c : trustedProxies) {
      if (c.contains(addr)) {
        return true;
      }
    }
    return false;
  }

  private ClientAddress key(byte[] addr) {
    return addr == null ? unknown : ClientAddress.of(addr, ipv6Prefix);
  }

  private static byte[] parsePeer(String peer) {
    if (peer == null) {
      return null;
    }
    int from = peer.startsWith("/") ? 1 : 0;
    return InetLiteral.parseEndpoint(peer, from, peer.length());
  }

  private static boolean isPresent(List<String> lines) {
    return lines != null && !lines.isEmpty();
  }

  /** The forwarding headers a resolver can read. */
  public enum Header {
    /** RFC 7239 {@code Forwarded}, its {@code for=} parameters. */
    FORWARDED("Forwarded"),
    /** {@code X-Forwarded-For}, comma-separated addresses. */
    X_FORWARDED_FOR("X-Forwarded-For"),
    /** {@code X-Real-IP}, a single address. */
    X_REAL_IP("X-Real-IP");

    private final String headerName;
    private final String lowerCase;
    private final String upperCase;

    Header(String headerName) {
      this.headerName = headerName;
      this.lowerCase = headerName.toLowerCase(Locale.ROOT);
      this.upperCase = headerName.toUpperCase(Locale.ROOT);
    }

    /**
     * The name first passed to the headers function of {@link ClientAddressResolver#resolve};
     * its lower- and upper-case forms follow when it gives nothing.
     */
    public String headerName() {
      return headerName;
    }
  }

  /** Collects and validates settings; each setter fails at once on a bad value. Not thread-safe. */
  public static final class Builder {
    private int trustedHops;
    private List<Cidr> trustedProxies = List.of();
    private int ipv6Prefix = 64;
    private String unknownBucket = "unknown";
    private boolean forwarded;
    private boolean xForwardedFor = true;
    private boolean xRealIp;

    private Builder() {}

    /**
     * Trust the last {@code n} proxies in front of the server without checking their addresses:
     * the client is the n-th forwarding entry from the right. 0 (the default) trusts none.
     *
     * @throws IllegalArgumentException unless 0 &lt;= n &lt;= 64
     */
    public Builder trustedHops(int n) {
      if (n < 0 || n > MAX_HOPS) {
        throw Checks.invalid("trustedHops", n, "0.." + MAX_HOPS);
      }
      this.trustedHops = n;
      return this;
    }

    /**
     * Trust proxies by address: {@code 10.0.0.0/8}, {@code ::1/128}, or a single address such as
     * {@code 192.168.1.7}. Replaces any earlier list; an empty list trusts none.
     *
     * @throws IllegalArgumentException naming the first entry that is not a network
     */
    public Builder trustedProxies(List<String> cidrs) {
      if (cidrs == null) {
        throw Checks.invalid("trustedProxies", null, "a list of CIDRs");
      }
      List<Cidr> parsed = new ArrayList<>(cidrs.size());
      for (String text : cidrs) {
        Cidr c = Cidr.parse(text);
        if (c == null) {
          throw Checks.invalid("trustedProxies", text,
              "an IPv4 or IPv6 address with an optional /prefix");
        }
        parsed.add(c);
      }
      this.trustedProxies = List.copyOf(parsed);
      return this;
    }

    /**
     * How many leading bits of an IPv6 address form its key (default 64).
     *
     * @throws IllegalArgumentException unless 1 &lt;= bits &lt;= 128
     */
    public Builder ipv6Prefix(int bits) {
      if (bits < 1 || bits > 128) {
        throw Checks.invalid("ipv6Prefix", bits, "1..128");
      }
      this.ipv6Prefix = bits;
      return this;
    }

    /**
     * The key shared by all requests whose client address is not known (default {@code unknown}).
     *
     * @throws IllegalArgumentException unless 1..64 printable ASCII characters without spaces
     */
    public Builder unknownBucket(String name) {
      if (!isKeySafe(name)) {
        throw Checks.invalid("unknownBucket", name,
            "1..64 printable ASCII characters, no spaces");
      }
      this.unknownBucket = name;
      return this;
    }

    /**
     * Whether {@code h} is read. Only {@code X-Forwarded-For} is by default: enable another only
     * if your proxy writes it (see the class comment on choosing).
     */
    public Builder header(Header h, boolean on) {
      if (h == null) {
        throw Checks.invalid("header", null, "FORWARDED, X_FORWARDED_FOR or X_REAL_IP");
      }
      switch (h) {
        case FORWARDED:
          forwarded = on;
          break;
        case X_FORWARDED_FOR:
          xForwardedFor = on;
          break;
        default:
          xRealIp = on;
          break;
      }
      return this;
    }

    /**
     * An immutable resolver with these settings.
     *
     * @throws IllegalStateException if both trusted hops and trusted proxies are set, since the
     *     two answer the same question differently
     */
    public ClientAddressResolver build() {
      if (trustedHops > 0 && !trustedProxies.isEmpty()) {
        throw new IllegalStateException("trustedHops : " + trustedHops + " and trustedProxies : "
            + trustedProxies + " (expected: one of them, not both)");
      }
      return new ClientAddressResolver(this);
    }

    private static boolean isKeySafe(String name) {
      if (name == null || name.isEmpty() || name.length() > 64) {
        return false;
      }
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        if (c <= ' ' || c >= 0x7f) {
          return false;
        }
      }
      return true;
    }
  }
}
