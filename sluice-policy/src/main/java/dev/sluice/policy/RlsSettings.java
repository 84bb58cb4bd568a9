package dev.sluice.policy;

/**
 * The {@code rls:} section: where the Envoy rate limit service (gRPC) listens and which headers
 * its answers ask Envoy to add.
 *
 * @param listen {@code HOST:PORT}, or null when the file does not start it ({@code --rls} wins)
 * @param ietfHeaders add {@code RateLimit} and {@code RateLimit-Policy} to responses
 * @param rateLimitHeaders add {@code X-RateLimit-Limit/Remaining/Reset}
 * @param maxDescriptors the most descriptors one request may carry
 * @param maxEntries the most entries one descriptor may carry
 * @param maxValueBytes the longest key or value, in UTF-8 bytes
 */
public record RlsSettings(String listen, boolean ietfHeaders, boolean rateLimitHeaders,
    int maxDescriptors, int maxEntries, int maxValueBytes) {

  public static RlsSettings defaults() {
    return new RlsSettings(null, true, false, 64, 16, 1024);
  }
}
