package dev.sluice.core.address;

import dev.sluice.core.internal.Checks;
import dev.sluice.core.internal.DottedQuad;

/**
 * A client's rate-limit address as a value: an IPv4 address, an IPv6 network of a configured
 * prefix (a subscriber usually holds a whole /64), or the named shared bucket of clients whose
 * address could not be determined. Immutable.
 *
 * <p>Adapters read {@link #known()} instead of guessing from a string's shape whether an address
 * was resolved. The address is kept as 128 bits (IPv4 as IPv4-mapped IPv6), so a store can key on
 * it without building or hashing text; {@link #toString()} is the canonical text used in Redis
 * keys and logs: {@code 203.0.113.7}, {@code 2001:db8:1:2::/64}, or the bucket name.
 */
public final class ClientAddress {

  private static final long MAPPED = 0xFFFF_0000_0000L;

  private final long high;
  private final long low;
  private final int prefix;
  private final String bucket;
  private String text;

  private ClientAddress(long high, long low, int prefix, String bucket) {
    this.high = high;
    this.low = low;
    this.prefix = prefix;
    this.bucket = bucket;
  }

  /** The shared bucket of clients whose address is unknown, named {@code name}. */
  public static ClientAddress unknown(String name) {
    Checks.notNull(name, "name");
    ClientAddress a = new ClientAddress(0, 0, 0, name);
    a.text = name;
    return a;
  }

  /** The IPv4 address {@code a.b.c.d} given as an int in network order. */
  public static ClientAddress ipv4(int address) {
    return new ClientAddress(0, MAPPED | (address & 0xFFFF_FFFFL), 128, null);
  }

  /**
   * An IPv6 network: the first {@code prefix} bits of {@code high:low}, the rest cleared. An
   * IPv4-mapped address ({@code ::ffff:a.b.c.d}) is the IPv4 address.
   */
  public static ClientAddress ipv6(long high, long low, int prefix) {
    if (prefix < 1 || prefix > 128) {
      throw Checks.invalid("prefix", prefix, "1..128");
    }
    if (high == 0 && (low >>> 32) == 0xFFFFL) {
      return ipv4((int) low);
    }
    long h = prefix >= 64 ? high : high & (-1L << (64 - prefix));
    long l = prefix >= 128 ? low : prefix <= 64 ? 0 : low & (-1L << (128 - prefix));
    return new ClientAddress(h, l, prefix, null);
  }

  /** An address from its 4 or 16 bytes; IPv6 grouped to {@code ipv6Prefix} bits. */
  static ClientAddress of(byte[] a, int ipv6Prefix) {
    if (a.length == 4) {
      return ipv4(((a[0] & 0xFF) << 24) | ((a[1] & 0xFF) << 16) | ((a[2] & 0xFF) << 8)
          | (a[3] & 0xFF));
    }
    return ipv6(bytesToLong(a, 0), bytesToLong(a, 8), ipv6Prefix);
  }

  /**
   * Parses the canonical text of a known address, exactly what {@link #toString()} gives
   * ({@code 203.0.113.7}, {@code 2001:db8::1}, {@code 2001:db8:1:2::/64}); null for any other
   * text, such as {@code 2001:DB8::1} or {@code ::ffff:203.0.113.7}, which then keys as text.
   */
  public static ClientAddress parse(String text) {
    if (text == null) {
      return null;
    }
    int n = text.length();
    long v4 = DottedQuad.parse(text);
    if (v4 >= 0) {
      return ipv4((int) v4);
    }
    if (n < 2 || n > 64 || text.indexOf(':') < 0) {
      return null;
    }
    int slash = text.indexOf('/');
    int prefix = 128;
    if (slash >= 0) {
      prefix = 0;
      if (slash == n - 1 || n - slash > 4) {
        return null;
      }
      for (int i = slash + 1; i < n; i++) {
        char c = text.charAt(i);
        if (c < '0' || c > '9') {
          return null;
        }
        prefix = prefix * 10 + (c - '0');
      }
      if (prefix < 1 || prefix > 128) {
        return null;
      }
    }
    byte[] a = InetLiteral.parseIpv6(text, 0, slash < 0 ? n : slash);
    if (a == null || a.length != 16) {
      return null;
    }
    ClientAddress parsed = ipv6(bytesToLong(a, 0), bytesToLong(a, 8), prefix);
    return parsed.toString().equals(text) ? parsed : null;
  }

  private static long bytesToLong(byte[] a, int from) {
    long v = 0;
    for (int i = from; i < from + 8; i++) {
      v = (v << 8) | (a[i] & 0xFF);
    }
    return v;
  }

  /** True for an address; false for the shared bucket of unknown clients. */
  public boolean known() {
    return bucket == null;
  }

  /** True for an IPv4 address. */
  public boolean ipv4() {
    return bucket == null && high == 0 && (low >>> 32) == 0xFFFFL;
  }

  /** The upper 64 bits of the address (IPv4 as {@code ::ffff:a.b.c.d}); 0 when unknown. */
  public long high() {
    return high;
  }

  /** The lower 64 bits of the address; 0 when unknown. */
  public long low() {
    return low;
  }

  /** Bits of the address that count: 128 for a whole address, the network's prefix otherwise. */
  public int prefixLength() {
    return prefix;
  }

  /** The canonical text: {@code 203.0.113.7}, {@code 2001:db8:1:2::/64} or the bucket's name. */
  @Override
  public String toString() {
    String t = text;
    if (t == null) {
      t = format();
      text = t;
    }
    return t;
  }

  private String format() {
    byte[] a = new byte[16];
    for (int i = 0; i < 8; i++) {
      a[i] = (byte) (high >>> (56 - 8 * i));
      a[8 + i] = (byte) (low >>> (56 - 8 * i));
    }
    if (ipv4()) {
      return InetLiteral.formatIpv4(new byte[] {a[12], a[13], a[14], a[15]});
    }
    String s = InetLiteral.formatIpv6(a);
    return prefix == 128 ? s : s + "/" + prefix;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ClientAddress c && c.high == high && c.low == low && c.prefix == prefix
        && (bucket == null ? c.bucket == null : bucket.equals(c.bucket));
  }

  @Override
  public int hashCode() {
    return bucket != null ? bucket.hashCode() : Long.hashCode(high * 31 + low) + prefix;
  }
}
