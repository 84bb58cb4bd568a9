package dev.sluice.core.internal;

/** Parses the canonical text of an IPv4 address without allocating. Internal. */
public final class DottedQuad {

  private DottedQuad() {}

  /**
   * The address of a canonical dotted quad ({@code 203.0.113.7}: four decimal octets, no
   * leading zeros) as an unsigned 32-bit value, or -1 when {@code s} is not one.
   */
  public static long parse(String s) {
    int n = s.length();
    if (n < 7 || n > 15) {
      return -1;
    }
    long value = 0;
    int i = 0;
    for (int part = 0; part < 4; part++) {
      if (part > 0 && (i >= n || s.charAt(i++) != '.')) {
        return -1;
      }
      int octet = i < n ? s.charAt(i++) - '0' : -1;
      if (octet < 0 || octet > 9) {
        return -1;
      }
      int d;
      if (i < n && (d = s.charAt(i) - '0') >= 0 && d <= 9) {
        if (octet == 0) {
          return -1; // a leading zero is not canonical
        }
        octet = octet * 10 + d;
        i++;
        if (i < n && (d = s.charAt(i) - '0') >= 0 && d <= 9) {
          octet = octet * 10 + d;
          i++;
          if (octet > 255) {
            return -1;
          }
        }
      }
      value = value << 8 | octet;
    }
    return i == n ? value : -1;
  }
}
