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
    int octet = 0;
    int digits = 0;
    int dots = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= '0' && c <= '9') {
        if (digits > 0 && octet == 0) {
          return -1; // a leading zero is not canonical
        }
        octet = octet * 10 + (c - '0');
        if (++digits > 3 || octet > 255) {
          return -1;
        }
      } else if (c == '.' && digits > 0 && dots < 3) {
        value = (value << 8) | octet;
        octet = 0;
        digits = 0;
        dots++;
      } else {
        return -1;
      }
    }
    if (dots != 3 || digits == 0) {
      return -1;
    }
    return (value << 8) | octet;
  }
}
