package dev.sluice.bench;

/**
 * Distinct, random-looking IPv4 literals without a set to deduplicate them.
 *
 * <p>Multiplying by an odd constant is a bijection on 32-bit integers, so {@code ip(0)} ..
 * {@code ip(n - 1)} are {@code n} distinct addresses for any {@code n} up to 2^32, scattered over
 * the whole address space (0x9E3779B1 is the 32-bit golden-ratio constant).
 */
final class Ips {

  private Ips() {}

  /** The {@code i}-th address as a fresh string, e.g. {@code "158.55.121.177"}. */
  static String ip(int i) {
    int a = i * 0x9E3779B1;
    return (a >>> 24) + "." + ((a >>> 16) & 0xFF) + "." + ((a >>> 8) & 0xFF) + "." + (a & 0xFF);
  }

  static String[] distinct(int n) {
    String[] ips = new String[n];
    for (int i = 0; i < n; i++) {
      ips[i] = ip(i);
    }
    return ips;
  }
}
