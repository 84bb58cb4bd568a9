package dev.sluice.policy;

import java.time.Duration;

/**
 * The gateway's self-protection and upstream timeouts.
 *
 * @param maxBodyBytes request body cap (default 1 MiB, seed 000); over it, 413 and close
 * @param maxHeaderBytes total header size cap (default 16 KiB); over it, 431
 * @param maxInitialLineBytes request line cap (default 8 KiB); over it, 414
 * @param idleTimeout close connections idle this long (default 60 s)
 * @param handshakeTimeout time a client gets to send a complete request head (default 10 s)
 * @param upstreamConnectTimeout (default 5 s); past it, 502
 * @param upstreamResponseTimeout time to the upstream's response head (default 30 s); past it, 504
 * @param healthPath a path the gateway answers itself on its public listener ({@code GET} and
 *     {@code HEAD}: 200 {@code {"status":"ok"}}), for a load balancer that can probe only that
 *     port; null (the default): the gateway answers no path of its own, every path goes upstream
 *     ({@code /healthz} and {@code /readyz} are on the admin listener)
 */
public record GatewaySettings(
    long maxBodyBytes,
    int maxHeaderBytes,
    int maxInitialLineBytes,
    Duration idleTimeout,
    Duration handshakeTimeout,
    Duration upstreamConnectTimeout,
    Duration upstreamResponseTimeout,
    String healthPath) {

  /** Without a health path of its own (the default). */
  public GatewaySettings(long maxBodyBytes, int maxHeaderBytes, int maxInitialLineBytes,
      Duration idleTimeout, Duration handshakeTimeout, Duration upstreamConnectTimeout,
      Duration upstreamResponseTimeout) {
    this(maxBodyBytes, maxHeaderBytes, maxInitialLineBytes, idleTimeout, handshakeTimeout,
        upstreamConnectTimeout, upstreamResponseTimeout, null);
  }

  public static GatewaySettings defaults() {
    return new GatewaySettings(1 << 20, 16 << 10, 8 << 10, Duration.ofSeconds(60),
        Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(30), null);
  }

  public GatewaySettings withHealthPath(String path) {
    return new GatewaySettings(maxBodyBytes, maxHeaderBytes, maxInitialLineBytes, idleTimeout,
        handshakeTimeout, upstreamConnectTimeout, upstreamResponseTimeout, path);
  }
}
