package dev.sluice.netty;

import dev.sluice.core.Decision;

/**
 * What the handlers report as they work, for metrics and logs. Methods are called on I/O threads
 * and must not block; every method does nothing by default.
 */
public interface RateLimitListener {

  /** Decision kinds passed to {@link #decision}. */
  String HTTP = "http";
  String WS_CONNECT = "ws-connect";
  String WS_ACTION = "ws-action";

  /** A decision was made: {@code kind} is {@link #HTTP}, {@link #WS_CONNECT} or {@link #WS_ACTION}. */
  default void decision(String kind, Decision decision) {}

  /**
   * A refusal started a ban (seed 003: log it once, with the key). Called after
   * {@link #decision} for the same decision; {@code key} is the banned store key.
   */
  default void banApplied(String kind, Decision decision, String key) {}

  /** A WebSocket connection to the client was opened (after the upgrade). */
  default void webSocketOpened() {}

  /** A WebSocket connection was closed with {@code code} (1006 when no close frame was seen). */
  default void webSocketClosed(int code) {}

  /** A handler answered by itself with {@code status} (429, 413, 431, 502...). */
  default void generated(int status) {}

  /** A listener that ignores everything. */
  static RateLimitListener none() {
    return NoListener.INSTANCE;
  }
}

final class NoListener implements RateLimitListener {
  static final NoListener INSTANCE = new NoListener();

  private NoListener() {}
}
