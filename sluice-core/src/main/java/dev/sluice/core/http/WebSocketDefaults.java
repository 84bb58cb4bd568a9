package dev.sluice.core.http;

import java.time.Duration;

/**
 * The WebSocket guards' defaults, written once: the Netty handler's settings and the policy
 * file's {@code websocket:} section both read them (seeds 000 and 001).
 */
public final class WebSocketDefaults {

  public static final int MAX_CONNECTIONS_PER_IP = 55;
  public static final int MAX_CONNECTIONS_UNKNOWN = 75;
  public static final int MAX_CONNECTIONS_PER_SESSION = 3;
  public static final int MAX_MESSAGE_BYTES = 64 * 1024;
  /**
   * A message split into more frames is closed with 1009. Each frame costs a decode and an object
   * however small it is: 1 MiB sent as 1-byte fragments is a million of them, which crashed an
   * upstream and doubled the gateway's memory (issue 7). 1,024 still lets a client stream a
   * 64 KiB message in 64-byte pieces.
   */
  public static final int MAX_FRAGMENTS = 1024;
  public static final long FLOOD_BURST = 120;
  public static final long FLOOD_PER_SECOND = 40;
  public static final Duration STRIKE_WINDOW = Duration.ofSeconds(30);
  /** How long a closing WebSocket waits for the client's close frame or EOF. */
  public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);

  private WebSocketDefaults() {}
}
