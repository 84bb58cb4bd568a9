package dev.sluice.core.address;

/**
 * An IPv4 or IPv6 network, {@code 10.0.0.0/8} or {@code 2001:db8::/32}; a bare address is a
 * single host ({@code /32} or {@code /128}).
 *
 * <p>Families do not mix: an IPv4 network never contains an IPv6 address, except an IPv4-mapped
 * one ({@code ::ffff:10.1.2.3} is in {@code 10.0.0.0/8}), and {@code ::/0} does not contain IPv4
 * addresses, so trusting everything takes both {@code 0.0.0.0/0} and {@code ::/0}. A mapped network
 * with a prefix of 96 or more ({@code ::ffff:10.0.0.0/104}) is stored as its IPv4 form
 * ({@code 10.0.0.0/8}) for the same reason. Host bits are cleared rather than refused:
 * {@code 10.1.2.3/8} means {@code 10.0.0.0/8}.
 */
final class Cidr {

  private final byte[] network; // host bits cleared
  private final int prefix;

  private Cidr(byte[] network, int prefix) {
    this.network = network;
    this.prefix = prefix;
  }

  /** The network written in {@code text} (surrounding spaces allowed), or null if it is not one. */
  static Cidr parse(String text) {
    if (text == null) {
      return null;
    }
    String s = text.strip();
    int slash = s.indexOf('/');
    byte[] addr = InetLiteral.parse(slash < 0 ? s : s.substring(0, slash));
    if (addr == null) {
      return null;
    }
    int bits = addr.length * 8;
    int prefix = bits;
    if (slash >= 0) {
      prefix = parsePrefix(s, slash + 1, bits);
      if (prefix < 0) {
        return null;
      }
    }
    if (InetLiteral.isMapped(addr) && prefix >= 96) {
      addr = InetLiteral.foldMapped(addr);
      prefix -= 96;
    }
    return new Cidr(InetLiteral.mask(addr, prefix), prefix);
  }

  /** Whether {@code addr} (4 or 16 bytes, as from {@link InetLiteral}) lies in this network; false for null. */
  boolean contains(byte[] addr) {
    if (addr == null) {
      return false;
    }
    int offset = 0;
    if (addr.length != network.length) {
      if (network.length == 4 && InetLiteral.isMapped(addr)) {
        offset = 12;
      } else {
        return false;
      }
    }
    int full = prefix >>> 3;
    for (int i = 0; i < full; i++) {
      if (addr[offset + i] != network[i]) {
        return false;
      }
    }
    int rest = prefix & 7;
    if (rest == 0) {
      return true;
    }
    int mask = 0xff00 >>> rest & 0xff;
    return (addr[offset + full] & mask) == (network[full] & 0xff);
  }

  /** The network's bytes, host bits cleared; never modified. */
  byte[] network() {
    return network;
  }

  int prefix() {
    return prefix;
  }

  boolean isIpv4() {
    return network.length == 4;
  }

  /** Canonical text, e.g. {@code 10.0.0.0/8} or {@code 2001:db8::/32}. */
  @Override
  public String toString() {
    return InetLiteral.format(network) + "/" + prefix;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Cidr && ((Cidr) o).prefix == prefix && java.util.Arrays.equals(((Cidr) o).network, network);
  }

  @Override
  public int hashCode() {
    return 31 * java.util.Arrays.hashCode(network) + prefix;
  }

  /** Decimal 0..max without sign or leading zeros; -1 otherwise. */
  private static int parsePrefix(String s, int from, int max) {
    int len = s.length() - from;
    if (len < 1 || len > 3 || (len > 1 && s.charAt(from) == '0')) {
      return -1;
    }
    int value = 0;
    for (int i = from; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value <= max ? value : -1;
  }
}
