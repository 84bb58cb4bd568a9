package dev.sluice.server.gateway;

import dev.sluice.core.Decision;

/**
 * What the gateway reports as it works; the server's metrics and logs implement it. Methods are
 * called on I/O threads and must not block.
 */
public interface GatewayEvents {

  /** A decision was made for an HTTP request or a WebSocket connect ({@code kind} "http"/"ws-connect"/"ws-action"). */
  default void decision(String kind, Decision decision) {}

  /** A refusal started a ban on store key {@code key}; follows {@link #decision}. */
  default void banApplied(String kind, Decision decision, String key) {}

  /** A WebSocket connection to the client was opened (after the upgrade). */
  default void webSocketOpened() {}

  /** A WebSocket connection was closed with {@code code} (1000, 1008, 1009, 1013, 1006 abnormal...). */
  default void webSocketClosed(int code) {}

  /** The gateway answered by itself: 413, 414, 431, 502, 504 and so on. */
  default void generated(int status) {}

  /** Events that ignore everything. */
  static GatewayEvents none() {
    return new GatewayEvents() {};
  }
}
