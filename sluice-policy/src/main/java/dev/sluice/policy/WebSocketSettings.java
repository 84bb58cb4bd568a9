package dev.sluice.policy;

import dev.sluice.core.http.WebSocketDefaults;
import java.time.Duration;
import java.util.Map;

/**
 * WebSocket guards (seeds 000 and 001).
 *
 * @param refuseBeforeUpgrade true: a refused connect gets 429 before the upgrade (seed 001);
 *     false: the upgrade completes and the socket closes at once with 1013 (seed 000, default)
 * @param maxConnectionsPerIp concurrent connections per client address (default 55)
 * @param maxConnectionsUnknown concurrent connections in the shared bucket of unresolvable
 *     addresses (default 75)
 * @param maxConnectionsPerSession concurrent connections per session token (default 3); 0 off
 * @param sessionDimension the policy dimension holding the session token (a header, cookie or
 *     query source), or null
 * @param maxFrameBytes largest frame or reassembled message (default 65536), else close 1009
 * @param maxFragments most frames one message may have (default 1024), else close 1009
 * @param floodBurst per-connection message bucket size (default 120)
 * @param floodPerSecond per-connection refill per second (default 40); over it, close 1008
 * @param actionField JSON field of text messages naming the action (e.g. {@code type}), or null
 * @param actionRules action name to policy rule name; {@code "*"} for the fallback
 * @param strikes refusals within {@code strikeWindow} before close 1008; 0 never closes
 * @param strikeWindow window for counting strikes
 * @param closeTimeout how long a closed WebSocket waits for the peer's close frame (default 2 s)
 */
public record WebSocketSettings(
    boolean refuseBeforeUpgrade,
    int maxConnectionsPerIp,
    int maxConnectionsUnknown,
    int maxConnectionsPerSession,
    String sessionDimension,
    int maxFrameBytes,
    int maxFragments,
    long floodBurst,
    long floodPerSecond,
    String actionField,
    Map<String, String> actionRules,
    int strikes,
    Duration strikeWindow,
    Duration closeTimeout) {

  /** Core's {@link WebSocketDefaults}, which the Netty handler's settings read too. */
  public static WebSocketSettings defaults() {
    return new WebSocketSettings(false, WebSocketDefaults.MAX_CONNECTIONS_PER_IP,
        WebSocketDefaults.MAX_CONNECTIONS_UNKNOWN, WebSocketDefaults.MAX_CONNECTIONS_PER_SESSION,
        null, WebSocketDefaults.MAX_MESSAGE_BYTES, WebSocketDefaults.MAX_FRAGMENTS,
        WebSocketDefaults.FLOOD_BURST, WebSocketDefaults.FLOOD_PER_SECOND, null, Map.of(), 0,
        WebSocketDefaults.STRIKE_WINDOW, WebSocketDefaults.CLOSE_TIMEOUT);
  }
}
