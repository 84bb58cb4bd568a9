package dev.sluice.gateway;

import dev.sluice.policy.LoggingSettings;

/**
 * One finished exchange, for the access log: built by the gateway when the response's last byte
 * was written, only while the policy's {@code logging.access} is on. Besides what a person reads,
 * it carries what {@code sluice replay} needs to make the same decision again from the log: the
 * time the request arrived (when it was decided), the socket peer and, when proxies are trusted,
 * the forwarding headers the policy's resolver read.
 *
 * @param epochMillis when the response completed
 * @param client the client address as the policy resolves it (trusted proxies applied)
 * @param method the request method
 * @param path the request target as sent
 * @param status the response status (101 for a WebSocket upgrade)
 * @param bytes the response body bytes sent
 * @param route the matched route's name, or null
 * @param rule the rule that decided (refused, or the tightest that allowed), or null
 * @param outcome {@code allowed}, {@code refused}, {@code shadow} (a shadow rule would have
 *     refused), {@code degraded} (the store did not answer; the rule's onStoreError decided),
 *     {@code error} (the upstream failed: 502, 504) or {@code invalid} (the gateway refused the
 *     request itself: 400, 413, 414, 431)
 * @param upstreamMicros from sending the request upstream to its response head, or -1 when no
 *     upstream answered
 * @param settings the policy's logging section the exchange ran under (format, file)
 * @param startMicros when the request was decided (read just before the decision; on the
 *     object pipeline, when its head arrived), in microseconds since the epoch on the store's
 *     clock, or -1 when it was not decided
 * @param protocol the request's protocol, like {@code HTTP/1.1}, or null
 * @param referer the {@code Referer} header, or null
 * @param userAgent the {@code User-Agent} header, or null
 * @param peer the socket peer's address, or null
 * @param host the {@code Host} header (HTTP/2's {@code :authority}), or null
 * @param forwarding the forwarding headers the policy's resolver reads, as received (lines
 *     joined by {@code ", "}): only when the policy trusts a proxy, else null
 * @param websocket true for a WebSocket upgrade request (refused or not)
 */
public record AccessEntry(long epochMillis, String client, String method, String path,
    int status, long bytes, String route, String rule, String outcome, long upstreamMicros,
    LoggingSettings settings, long startMicros, String protocol, String referer,
    String userAgent, String peer, String host, Forwarding forwarding, boolean websocket) {

  /** An entry without the request's own facts (protocol, headers, peer, arrival time). */
  public AccessEntry(long epochMillis, String client, String method, String path, int status,
      long bytes, String route, String rule, String outcome, long upstreamMicros,
      LoggingSettings settings) {
    this(epochMillis, client, method, path, status, bytes, route, rule, outcome, upstreamMicros,
        settings, -1, null, null, null, null, null, null, false);
  }

  /**
   * The wall clock at {@link System#nanoTime()}'s zero, in microseconds, taken once: an entry's
   * time then moves with the ticker the store decides by, not with a wall clock that NTP slews.
   */
  private static final long EPOCH_AT_NANO_ZERO;

  static {
    java.time.Instant now = java.time.Clock.systemUTC().instant();
    EPOCH_AT_NANO_ZERO = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000
        - System.nanoTime() / 1000;
  }

  /**
   * Now, in microseconds since the epoch, on the store's clock (the system ticker): the time an
   * entry records a request was decided, read just before the decision.
   */
  static long nowMicros() {
    return EPOCH_AT_NANO_ZERO + System.nanoTime() / 1000;
  }

  /**
   * The forwarding headers as received, each null when absent.
   *
   * @param xForwardedFor {@code X-Forwarded-For}
   * @param forwarded {@code Forwarded} (RFC 7239)
   * @param xRealIp {@code X-Real-IP}
   */
  public record Forwarding(String xForwardedFor, String forwarded, String xRealIp) {

    /**
     * The headers {@code lines} gives (several lines of one joined by {@code ", "}) when
     * {@code trust} names a proxy, else null: without one the resolver reads none of them.
     */
    static Forwarding of(dev.sluice.policy.TrustSettings trust,
        java.util.function.Function<String, java.util.List<String>> lines) {
      if (trust == null || (trust.hops() == 0 && trust.proxies().isEmpty())) {
        return null;
      }
      return new Forwarding(joined(lines.apply("X-Forwarded-For")),
          joined(lines.apply("Forwarded")), joined(lines.apply("X-Real-IP")));
    }

    private static String joined(java.util.List<String> lines) {
      return lines == null || lines.isEmpty() ? null : String.join(", ", lines);
    }
  }
}
