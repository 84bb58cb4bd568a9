package dev.sluice.policy;

import java.time.Duration;

/**
 * The gateway's self-protection and upstream timeouts. Built by name ({@link #builder()},
 * {@link #toBuilder()}); every value left out is the default below.
 *
 * @param maxBodyBytes request body cap (default 1 MiB, seed 000); over it, 413 and close
 * @param maxHeaderBytes total header size cap (default 16 KiB); over it, 431
 * @param maxInitialLineBytes request line cap (default 8 KiB); over it, 414
 * @param idleTimeout close connections idle this long (default 60 s)
 * @param handshakeTimeout time a client gets to send a complete request head (default 10 s)
 * @param bodyTimeout the longest a request body may stall between two reads (nginx's
 *     {@code client_body_timeout}; default 10 s); past it, 408 and close
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
    Duration bodyTimeout,
    Duration upstreamConnectTimeout,
    Duration upstreamResponseTimeout,
    String healthPath) {

  public static GatewaySettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().maxBodyBytes(maxBodyBytes).maxHeaderBytes(maxHeaderBytes)
        .maxInitialLineBytes(maxInitialLineBytes).idleTimeout(idleTimeout)
        .handshakeTimeout(handshakeTimeout).bodyTimeout(bodyTimeout)
        .upstreamConnectTimeout(upstreamConnectTimeout)
        .upstreamResponseTimeout(upstreamResponseTimeout).healthPath(healthPath);
  }

  /** Builds {@link GatewaySettings} by name, from the defaults. */
  public static final class Builder {
    private long maxBodyBytes = 1 << 20;
    private int maxHeaderBytes = 16 << 10;
    private int maxInitialLineBytes = 8 << 10;
    private Duration idleTimeout = Duration.ofSeconds(60);
    private Duration handshakeTimeout = Duration.ofSeconds(10);
    private Duration bodyTimeout = Duration.ofSeconds(10);
    private Duration upstreamConnectTimeout = Duration.ofSeconds(5);
    private Duration upstreamResponseTimeout = Duration.ofSeconds(30);
    private String healthPath;

    private Builder() {}

    public Builder maxBodyBytes(long bytes) {
      this.maxBodyBytes = bytes;
      return this;
    }

    public Builder maxHeaderBytes(int bytes) {
      this.maxHeaderBytes = bytes;
      return this;
    }

    public Builder maxInitialLineBytes(int bytes) {
      this.maxInitialLineBytes = bytes;
      return this;
    }

    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = timeout;
      return this;
    }

    public Builder handshakeTimeout(Duration timeout) {
      this.handshakeTimeout = timeout;
      return this;
    }

    public Builder bodyTimeout(Duration timeout) {
      this.bodyTimeout = timeout;
      return this;
    }

    public Builder upstreamConnectTimeout(Duration timeout) {
      this.upstreamConnectTimeout = timeout;
      return this;
    }

    public Builder upstreamResponseTimeout(Duration timeout) {
      this.upstreamResponseTimeout = timeout;
      return this;
    }

    public Builder healthPath(String path) {
      this.healthPath = path;
      return this;
    }

    public GatewaySettings build() {
      return new GatewaySettings(maxBodyBytes, maxHeaderBytes, maxInitialLineBytes, idleTimeout,
          handshakeTimeout, bodyTimeout, upstreamConnectTimeout, upstreamResponseTimeout,
          healthPath);
    }
  }
}
