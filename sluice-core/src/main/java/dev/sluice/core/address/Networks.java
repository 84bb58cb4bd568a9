package dev.sluice.core.address;

import dev.sluice.core.InvalidValueException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A list of IPv4 and IPv6 networks that a resolved {@link ClientAddress} is matched against: a
 * policy's {@code allow:} list and a route's {@code from:}. Immutable.
 *
 * <p>Each network is kept as the same 128 bits a {@code ClientAddress} holds (IPv4 as
 * {@code ::ffff:a.b.c.d}, so {@code 10.0.0.0/8} is {@code ::ffff:10.0.0.0/104}) plus two masks,
 * so a match is two ANDs and two compares per network, with nothing allocated.
 *
 * <p>A client's IPv6 address is grouped to the resolver's {@code ipv6Prefix} (64 bits by
 * default) before anything sees it, so a network longer than the group is compared on the
 * group's bits only: with the default, {@code 2001:db8::1/128} matches every address of
 * {@code 2001:db8::/64}, the one client the limiter counts them as. Set {@code ipv6Prefix: 128}
 * to tell single IPv6 hosts apart. The shared bucket of unknown clients is in no network.
 */
public final class Networks {

  private static final Networks NONE = new Networks(List.of(), new long[0], new boolean[0]);

  private final List<String> text;
  /** Per network: high, low, high mask, low mask. */
  private final long[] nets;
  /** Per network: whether it is IPv4 (families do not mix, as in {@link Cidr}). */
  private final boolean[] v4;

  private Networks(List<String> text, long[] nets, boolean[] v4) {
    this.text = text;
    this.nets = nets;
    this.v4 = v4;
  }

  /** No networks: matches nothing. */
  public static Networks none() {
    return NONE;
  }

  /**
   * The networks written in {@code cidrs}, like {@code 10.0.0.0/8}, {@code ::1} or
   * {@code 2001:db8::/32}; a bare address is one host.
   *
   * @throws InvalidValueException naming {@code field} and the first entry that is not a network
   */
  public static Networks parse(List<String> cidrs, String field) {
    if (cidrs == null || cidrs.isEmpty()) {
      return NONE;
    }
    List<String> text = new ArrayList<>(cidrs.size());
    long[] nets = new long[cidrs.size() * 4];
    boolean[] v4 = new boolean[cidrs.size()];
    int i = 0;
    for (String s : cidrs) {
      Cidr c = Cidr.parse(s);
      if (c == null) {
        throw new InvalidValueException(field, String.valueOf(s),
            "an IPv4 or IPv6 network like 10.0.0.0/8 or 2001:db8::/32, or an address");
      }
      text.add(c.toString());
      v4[i / 4] = c.isIpv4();
      byte[] a = c.isIpv4() ? mapped(c.network()) : c.network();
      int prefix = c.isIpv4() ? c.prefix() + 96 : c.prefix();
      nets[i] = longAt(a, 0);
      nets[i + 1] = longAt(a, 8);
      nets[i + 2] = prefix >= 64 ? -1L : prefix == 0 ? 0 : -1L << (64 - prefix);
      nets[i + 3] = prefix <= 64 ? 0 : prefix == 128 ? -1L : -1L << (128 - prefix);
      i += 4;
    }
    return new Networks(Collections.unmodifiableList(text), nets, v4);
  }

  /** Whether {@code cidr} is a network or an address that {@link #parse} accepts. */
  public static boolean isNetwork(String cidr) {
    return Cidr.parse(cidr) != null;
  }

  public boolean isEmpty() {
    return nets.length == 0;
  }

  /** Whether {@code address} lies in one of the networks; false for null or an unknown client. */
  public boolean contains(ClientAddress address) {
    if (address == null || !address.known() || nets.length == 0) {
      return false;
    }
    long high = address.high();
    long low = address.low();
    boolean ipv4 = address.ipv4();
    int p = address.prefixLength();
    // Bits past the client's group are unknown (cleared): compare only the group's bits.
    long gh = p >= 64 ? -1L : -1L << (64 - p);
    long gl = p <= 64 ? 0 : p == 128 ? -1L : -1L << (128 - p);
    for (int i = 0; i < nets.length; i += 4) {
      if (v4[i >> 2] != ipv4) {
        continue;
      }
      long mh = nets[i + 2] & gh;
      long ml = nets[i + 3] & gl;
      if ((high & mh) == (nets[i] & mh) && (low & ml) == (nets[i + 1] & ml)) {
        return true;
      }
    }
    return false;
  }

  /** The networks in canonical form, as given. */
  public List<String> toList() {
    return text;
  }

  @Override
  public String toString() {
    return text.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Networks n && n.text.equals(text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  private static byte[] mapped(byte[] v4) {
    byte[] a = new byte[16];
    a[10] = (byte) 0xff;
    a[11] = (byte) 0xff;
    System.arraycopy(v4, 0, a, 12, 4);
    return a;
  }

  private static long longAt(byte[] a, int from) {
    long v = 0;
    for (int i = from; i < from + 8; i++) {
      v = (v << 8) | (a[i] & 0xFF);
    }
    return v;
  }
}
