package dev.sluice.policy;

import static dev.sluice.policy.Values.POSITIVE_DURATION;
import static dev.sluice.policy.Values.size;

import java.time.Duration;
import java.util.List;

/** The {@code gateway:} section: the gateway's own limits and timeouts. */
final class GatewaySection {

  static final List<String> KEYS = List.of("maxBodyBytes", "maxHeaderBytes",
      "maxInitialLineBytes", "idleTimeout", "handshakeTimeout", "upstreamConnectTimeout",
      "upstreamResponseTimeout", "healthPath");

  private GatewaySection() {}

  static GatewaySettings read(Walk walk, Mapping doc) {
    GatewaySettings d = GatewaySettings.defaults();
    Mapping o = doc.section("gateway", KEYS, "a mapping");
    if (o == null) {
      return d;
    }
    long body = o.get("maxBodyBytes", "a size in 0..1TiB", size(0, 1L << 40), d.maxBodyBytes());
    long header = o.get("maxHeaderBytes", "a size in 1KiB..1MiB", size(1 << 10, 1 << 20),
        (long) d.maxHeaderBytes());
    long line = o.get("maxInitialLineBytes", "a size in 256..1MiB", size(256, 1 << 20),
        (long) d.maxInitialLineBytes());
    Duration idle = o.get("idleTimeout", Durations.EXPECTED, POSITIVE_DURATION, d.idleTimeout());
    Duration handshake = o.get("handshakeTimeout", Durations.EXPECTED, POSITIVE_DURATION,
        d.handshakeTimeout());
    Duration connect = o.get("upstreamConnectTimeout", Durations.EXPECTED, POSITIVE_DURATION,
        d.upstreamConnectTimeout());
    Duration response = o.get("upstreamResponseTimeout", Durations.EXPECTED, POSITIVE_DURATION,
        d.upstreamResponseTimeout());
    String health = o.get("healthPath", "a path like /healthz (answered by the gateway itself on "
        + "its public listener)", text -> {
          if (!text.startsWith("/") || text.length() > 256 || text.indexOf('?') >= 0
              || !dev.sluice.core.policy.RequestTarget.parse(text,
                  dev.sluice.core.policy.RequestTarget.Rules.defaults()).path().equals(text)) {
            throw new IllegalArgumentException("a normalised path like /healthz");
          }
          return text;
        }, null);
    return new GatewaySettings(body, (int) header, (int) line, idle, handshake, connect, response,
        health);
  }
}
