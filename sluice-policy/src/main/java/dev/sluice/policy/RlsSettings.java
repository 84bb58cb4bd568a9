package dev.sluice.policy;

import java.time.Duration;

/**
 * The {@code rls:} section: where the Envoy rate limit service (gRPC) listens, which headers its
 * answers ask Envoy to add, and where the HTTP decision API ({@code POST /v1/check}) is served.
 *
 * @param listen {@code HOST:PORT}, or null when the file does not start it ({@code --rls} wins)
 * @param ietfHeaders add {@code RateLimit} and {@code RateLimit-Policy} to responses
 * @param rateLimitHeaders add {@code X-RateLimit-Limit/Remaining/Reset}
 * @param maxDescriptors the most descriptors one request may carry
 * @param maxEntries the most entries one descriptor may carry
 * @param maxValueBytes the longest key or value, in UTF-8 bytes
 * @param checkApi where {@code POST /v1/check} is served ({@code --check-api} wins): {@code off}
 *     (the default), {@code admin} (the admin listener, behind its token), {@code gateway} (the
 *     public listener: anyone who reaches it can spend any key's quota), or {@code HOST:PORT} /
 *     {@code PORT} for a listener of its own (loopback when no host is given)
 * @param checkApiLimit the decision API's own limit, one token bucket over all its callers
 *     ({@code rls.checkApiLimit: {burst: 1000, refill: 1000, period: 1s}} by default): past it
 *     the API answers 429 without deciding anything
 */
public record RlsSettings(String listen, boolean ietfHeaders, boolean rateLimitHeaders,
    int maxDescriptors, int maxEntries, int maxValueBytes, String checkApi,
    Bucket checkApiLimit) {

  /** {@code rls.checkApi}'s default: not served. */
  public static final String CHECK_API_OFF = "off";

  /**
   * A token bucket: {@code burst} at once, {@code refill} more per {@code period}.
   *
   * @param burst the bucket's size
   * @param refill tokens added per period
   * @param period the refill period
   */
  public record Bucket(long burst, long refill, Duration period) {
    public static final Bucket CHECK_API_DEFAULT = new Bucket(1000, 1000, Duration.ofSeconds(1));
  }

  public static RlsSettings defaults() {
    return new RlsSettings(null, true, false, 64, 16, 1024, CHECK_API_OFF,
        Bucket.CHECK_API_DEFAULT);
  }

  /**
   * Checks a {@code checkApi} value ({@code rls.checkApi} or {@code --check-api}) and returns it
   * trimmed; throws with what is expected.
   */
  public static String checkApiPlace(String text) {
    String t = text.trim();
    if (t.equals("off") || t.equals("admin") || t.equals("gateway")) {
      return t;
    }
    int colon = t.lastIndexOf(':');
    String port = t.substring(colon + 1);
    if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) > 65535) {
      throw new IllegalArgumentException(CHECK_API_EXPECTED);
    }
    return t;
  }

  static final String CHECK_API_EXPECTED = "off, admin, gateway, or HOST:PORT like 127.0.0.1:9091";
}
