package dev.sluice.gateway;

import dev.sluice.netty.RateLimitListener;

/**
 * What the gateway reports as it works: the admission step's decisions and the WebSocket
 * connections ({@link RateLimitListener}, core's {@code DecisionListener}), and the proxy's own
 * events. The server's metrics and logs implement it. Methods are called on I/O threads and must
 * not block.
 */
public interface GatewayEvents extends RateLimitListener {

  /**
   * The upstream failed an exchange: {@code status} 502 (could not connect, closed, invalid
   * response) or 504 (no response in time), {@code upstream} its address, {@code cause} what
   * happened. For the log only: the client's body says no more than "bad gateway". Called for
   * every failure: throttle any logging.
   */
  default void upstreamFailed(int status, String upstream, String cause) {}

  /**
   * A JSON field was checked by the moderation section: {@code surface} like {@code username},
   * {@code reason} like {@code blocked_term}, or {@code none} when it was allowed.
   */
  default void moderated(String surface, String reason) {}

  /**
   * An exchange completed (its response's last byte was written); called only while the policy's
   * {@code logging.access} is on.
   */
  default void exchange(AccessEntry entry) {}

  /**
   * A request ended with {@code verdict} on {@code route} (null when none was matched): once per
   * request, whatever its protocol, whether or not the access log is on.
   */
  default void verdict(String route, dev.sluice.core.policy.RequestVerdict verdict) {}

  /** Events that ignore everything. */
  static GatewayEvents none() {
    return new GatewayEvents() {};
  }
}
