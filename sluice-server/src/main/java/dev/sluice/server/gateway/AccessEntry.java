package dev.sluice.server.gateway;

import dev.sluice.policy.LoggingSettings;

/**
 * One finished exchange, for the access log: built by the gateway when the response's last byte
 * was written, only while the policy's {@code logging.access} is on.
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
 */
public record AccessEntry(long epochMillis, String client, String method, String path,
    int status, long bytes, String route, String rule, String outcome, long upstreamMicros,
    LoggingSettings settings) {}
