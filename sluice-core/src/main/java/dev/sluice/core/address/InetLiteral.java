package dev.sluice.core.address;

import java.util.HexFormat;

/**
 * IP address literals: text to bytes and back, without any name lookup.
 *
 * <p>Why hand-written: {@code InetAddress.getByName} sends anything that is not a literal to DNS,
 * so a header value such as {@code evil.example} would make a request wait on a resolver the
 * caller picked (and leak that it was looked up). Here text is either a literal or rejected. The
 * parsers are strict where lenient parsers have caused trouble: IPv4 is exactly four decimal
 * octets with no leading zeros ({@code 010.0.0.1} is octal to {@code inet_aton} and decimal to
 * Java, so it is refused rather than guessed), no {@code 127.1} or {@code 0x7f.0.0.1} shorthand,
 * ASCII digits only.
 *
 * <p>All methods return {@code null} for anything they do not accept and never throw for any
 * in-range indices.
 */
final class InetLiteral {

  /**
   * Longest endpoint text looked at: {@code [} + a 45-character IPv6 literal + zone + {@code ]:65535}
   * fits with room for a long zone id; longer text is rejected before any parsing work.
   */
  static final int MAX_ENDPOINT_LENGTH = 128;

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private InetLiteral() {}

  /** A bare IPv4 or IPv6 literal (no brackets, port or zone): 4 or 16 bytes, unfolded, or null. */
  static byte[] parse(String s) {
    if (s == null) {
      return null;
    }
    return indexOf(s, ':', 0, s.length()) < 0 ? parseIpv4(s, 0, s.length()) : parseIpv6(s, 0, s.length());
  }

  /** Exactly four decimal octets 0..255, no leading zeros: 4 bytes or null. */
  static byte[] parseIpv4(String s, int from, int to) {
    if (to - from < 7 || to - from > 15) {
      return null;
    }
    byte[] out = new byte[4];
    int i = from;
    for (int part = 0; part < 4; part++) {
      if (part > 0) {
        if (i >= to || s.charAt(i) != '.') {
          return null;
        }
        i++;
      }
      int start = i;
      int value = 0;
      while (i < to && i - start < 4) {
        char c = s.charAt(i);
        if (c < '0' || c > '9') {
          break;
        }
        value = value * 10 + (c - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && s.charAt(start) == '0')) {
        return null;
      }
      out[part] = (byte) value;
    }
    return i == to ? out : null;
  }

  /**
   * RFC 4291 section 2.2 text: eight hex groups, one optional {@code ::}, an optional trailing
   * dotted quad. Case-insensitive. 16 bytes (not folded) or null.
   */
  static byte[] parseIpv6(String s, int from, int to) {
    int len = to - from;
    if (len < 2 || len > 45) {
      return null;
    }
    byte[] out = new byte[16];
    int groups = 0;
    int gap = -1; // group index that "::" stands in front of
    int i = from;
    if (s.charAt(i) == ':') {
      if (s.charAt(i + 1) != ':') {
        return null;
      }
      gap = 0;
      i += 2;
    }
    while (i < to) {
      if (groups == 8) {
        return null;
      }
      int start = i;
      int value = 0;
      while (i < to && i - start < 5) {
        int d = hexValue(s.charAt(i));
        if (d < 0) {
          break;
        }
        value = value << 4 | d;
        i++;
      }
      if (i < to && s.charAt(i) == '.') {
        if (groups > 6) {
          return null;
        }
        byte[] v4 = parseIpv4(s, start, to);
        if (v4 == null) {
          return null;
        }
        System.arraycopy(v4, 0, out, groups * 2, 4);
        groups += 2;
        break;
      }
      int digits = i - start;
      if (digits == 0 || digits > 4) {
        return null;
      }
      out[groups * 2] = (byte) (value >>> 8);
      out[groups * 2 + 1] = (byte) value;
      groups++;
      if (i == to) {
        break;
      }
      if (s.charAt(i) != ':' || ++i == to) {
        return null; // not a separator, or a single trailing ':'
      }
      if (s.charAt(i) == ':') {
        if (gap >= 0) {
          return null;
        }
        gap = groups;
        i++;
      }
    }
    if (gap < 0) {
      return groups == 8 ? out : null;
    }
    if (groups == 8) {
      return null; // "::" must stand for at least one group
    }
    int tail = groups - gap;
    System.arraycopy(out, gap * 2, out, 16 - tail * 2, tail * 2);
    java.util.Arrays.fill(out, gap * 2, 16 - tail * 2, (byte) 0);
    return out;
  }

  /**
   * An address as it arrives in a header or as a socket peer: surrounding spaces/tabs, optional
   * brackets, optional port ({@code 1.2.3.4:80}, {@code [::1]:80}, or an RFC 7239 obfuscated port
   * {@code :_abc}), optional IPv6 zone ({@code fe80::1%eth0}, dropped). IPv4-mapped IPv6 is folded
   * to 4 bytes so that {@code ::ffff:1.2.3.4} and {@code 1.2.3.4} are one client.
   */
  static byte[] parseEndpoint(String s, int from, int to) {
    while (from < to && isOws(s.charAt(from))) {
      from++;
    }
    while (to > from && isOws(s.charAt(to - 1))) {
      to--;
    }
    if (from == to || to - from > MAX_ENDPOINT_LENGTH) {
      return null;
    }
    byte[] addr;
    if (s.charAt(from) == '[') {
      int close = indexOf(s, ']', from + 1, to);
      if (close < 0 || (close + 1 != to && !(s.charAt(close + 1) == ':' && isPort(s, close + 2, to)))) {
        return null;
      }
      addr = parseIpv6WithZone(s, from + 1, close);
    } else {
      int colon = indexOf(s, ':', from, to);
      if (colon < 0) {
        addr = parseIpv4(s, from, to);
      } else if (indexOf(s, ':', colon + 1, to) < 0) {
        addr = isPort(s, colon + 1, to) ? parseIpv4(s, from, colon) : null;
      } else {
        addr = parseIpv6WithZone(s, from, to); // several colons: IPv6 without brackets cannot carry a port
      }
    }
    return addr == null ? null : foldMapped(addr);
  }

  static byte[] parseEndpoint(String s) {
    return s == null ? null : parseEndpoint(s, 0, s.length());
  }

  /** {@code ::ffff:a.b.c.d} becomes the 4 bytes a.b.c.d; anything else is returned as is. */
  static byte[] foldMapped(byte[] a) {
    if (!isMapped(a)) {
      return a;
    }
    return new byte[] {a[12], a[13], a[14], a[15]};
  }

  static boolean isMapped(byte[] a) {
    if (a.length != 16 || a[10] != (byte) 0xff || a[11] != (byte) 0xff) {
      return false;
    }
    for (int i = 0; i < 10; i++) {
      if (a[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /** Dotted quad for 4 bytes, RFC 5952 canonical text for 16 bytes. */
  static String format(byte[] a) {
    return a.length == 4 ? formatIpv4(a) : formatIpv6(a);
  }

  static String formatIpv4(byte[] a) {
    return new StringBuilder(15)
        .append(a[0] & 0xff).append('.')
        .append(a[1] & 0xff).append('.')
        .append(a[2] & 0xff).append('.')
        .append(a[3] & 0xff)
        .toString();
  }

  /** RFC 5952: lower case, no leading zeros, the longest run (first on ties) of 2+ zero groups as {@code ::}. */
  static String formatIpv6(byte[] a) {
    int bestStart = -1;
    int bestLen = 0;
    for (int i = 0; i < 8; ) {
      if (group(a, i) != 0) {
        i++;
        continue;
      }
      int j = i;
      while (j < 8 && group(a, j) == 0) {
        j++;
      }
      if (j - i > bestLen && j - i >= 2) {
        bestStart = i;
        bestLen = j - i;
      }
      i = j;
    }
    StringBuilder sb = new StringBuilder(39);
    for (int i = 0; i < 8; ) {
      if (i == bestStart) {
        sb.append("::");
        i += bestLen;
        continue;
      }
      if (i > 0 && i != bestStart + bestLen) {
        sb.append(':');
      }
      appendHex(sb, group(a, i));
      i++;
    }
    return sb.toString();
  }

  /** A copy of {@code a} with every bit after the first {@code prefix} bits cleared. */
  static byte[] mask(byte[] a, int prefix) {
    byte[] out = a.clone();
    int full = prefix >>> 3;
    if (full < out.length) {
      out[full] &= (byte) (0xff00 >>> (prefix & 7));
      java.util.Arrays.fill(out, full + 1, out.length, (byte) 0);
    }
    return out;
  }

  static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  static int indexOf(String s, char c, int from, int to) {
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private static byte[] parseIpv6WithZone(String s, int from, int to) {
    int pct = indexOf(s, '%', from, to);
    if (pct < 0) {
      return parseIpv6(s, from, to);
    }
    return isZone(s, pct + 1, to) ? parseIpv6(s, from, pct) : null;
  }

  /** RFC 6874 zone id: unreserved characters, plus '%' for the URI form {@code %25eth0}. */
  private static boolean isZone(String s, int from, int to) {
    if (from >= to) {
      return false;
    }
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (!(isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '%')) {
        return false;
      }
    }
    return true;
  }

  /** 1..65535 as 1-5 digits, or an RFC 7239 obfuscated port {@code _[A-Za-z0-9._-]+}. */
  private static boolean isPort(String s, int from, int to) {
    int len = to - from;
    if (len <= 0) {
      return false;
    }
    if (s.charAt(from) == '_') {
      if (len == 1) {
        return false;
      }
      for (int i = from + 1; i < to; i++) {
        char c = s.charAt(i);
        if (!(isAlnum(c) || c == '.' || c == '_' || c == '-')) {
          return false;
        }
      }
      return true;
    }
    if (len > 5) {
      return false;
    }
    int value = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
      value = value * 10 + (c - '0');
    }
    return value <= 65535;
  }

  private static boolean isAlnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }

  /** The value of ASCII hex digit {@code c} (no other script's digits), or -1. */
  private static int hexValue(char c) {
    return HexFormat.isHexDigit(c) ? HexFormat.fromHexDigit(c) : -1;
  }

  private static int group(byte[] a, int i) {
    return (a[i * 2] & 0xff) << 8 | (a[i * 2 + 1] & 0xff);
  }

  private static void appendHex(StringBuilder sb, int v) {
    boolean started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      int d = (v >>> shift) & 0xf;
      if (d != 0 || started || shift == 0) {
        sb.append(HEX[d]);
        started = true;
      }
    }
  }
}
