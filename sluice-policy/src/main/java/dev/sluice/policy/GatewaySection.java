package dev.sluice.policy;

import static dev.sluice.policy.Values.POSITIVE_DURATION;
import static dev.sluice.policy.Values.size;

import dev.sluice.core.policy.RequestTarget;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The {@code gateway:} section: the gateway's own limits and timeouts. */
final class GatewaySection {

  private static final Field<GatewaySettings, Long> MAX_BODY = Field.size("maxBodyBytes",
      "a size in 0..1TiB", size(0, 1L << 40), GatewaySettings::maxBodyBytes);
  private static final Field<GatewaySettings, Long> MAX_HEADER = Field.size("maxHeaderBytes",
      "a size in 1KiB..1MiB", size(1 << 10, 1 << 20), g -> (long) g.maxHeaderBytes());
  private static final Field<GatewaySettings, Long> MAX_LINE = Field.size("maxInitialLineBytes",
      "a size in 256..1MiB", size(256, 1 << 20), g -> (long) g.maxInitialLineBytes());
  private static final Field<GatewaySettings, Duration> IDLE = Field.duration("idleTimeout",
      Durations.EXPECTED, POSITIVE_DURATION, GatewaySettings::idleTimeout);
  private static final Field<GatewaySettings, Duration> HANDSHAKE = Field.duration(
      "handshakeTimeout", Durations.EXPECTED, POSITIVE_DURATION,
      GatewaySettings::handshakeTimeout);
  private static final Field<GatewaySettings, Duration> BODY = Field.duration(
      "bodyTimeout", Durations.EXPECTED, POSITIVE_DURATION, GatewaySettings::bodyTimeout);
  private static final Field<GatewaySettings, Duration> CONNECT = Field.duration(
      "upstreamConnectTimeout", Durations.EXPECTED, POSITIVE_DURATION,
      GatewaySettings::upstreamConnectTimeout);
  private static final Field<GatewaySettings, Duration> RESPONSE = Field.duration(
      "upstreamResponseTimeout", Durations.EXPECTED, POSITIVE_DURATION,
      GatewaySettings::upstreamResponseTimeout);
  private static final Field<GatewaySettings, String> HEALTH = Field.of("healthPath",
      "a path like /healthz (answered by the gateway itself on its public listener)", text -> {
        if (!text.startsWith("/") || text.length() > 256 || text.indexOf('?') >= 0
            || !RequestTarget.parse(text, RequestTarget.Rules.defaults()).path().equals(text)) {
          throw new IllegalArgumentException("a normalised path like /healthz");
        }
        return text;
      }, GatewaySettings::healthPath);
  private static final Fields<GatewaySettings> FIELDS = new Fields<>(MAX_BODY, MAX_HEADER,
      MAX_LINE, IDLE, HANDSHAKE, BODY, CONNECT, RESPONSE, HEALTH);

  static final List<String> KEYS = FIELDS.keys();

  private GatewaySection() {}

  static GatewaySettings read(Walk walk, Mapping doc) {
    GatewaySettings d = GatewaySettings.defaults();
    Mapping o = doc.section("gateway", KEYS, "a mapping");
    if (o == null) {
      return d;
    }
    Fields<GatewaySettings>.Row r = FIELDS.read(o, d);
    return GatewaySettings.builder().maxBodyBytes(r.get(MAX_BODY))
        .maxHeaderBytes(r.get(MAX_HEADER).intValue())
        .maxInitialLineBytes(r.get(MAX_LINE).intValue()).idleTimeout(r.get(IDLE))
        .handshakeTimeout(r.get(HANDSHAKE)).bodyTimeout(r.get(BODY))
        .upstreamConnectTimeout(r.get(CONNECT)).upstreamResponseTimeout(r.get(RESPONSE))
        .healthPath(r.get(HEALTH)).build();
  }

  static Map<String, Object> render(GatewaySettings g) {
    return FIELDS.render(g);
  }
}
