package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.DURATION;
import static dev.sluice.policy.Values.TEXT;

import java.time.Duration;
import java.util.List;

/** The {@code cors:} section: CORS headers on the responses an adapter generates itself. */
final class CorsSection {

  static final List<String> KEYS = List.of("allowOrigins", "allowMethods", "allowHeaders",
      "exposeHeaders", "allowCredentials", "maxAge", "limitPreflights");

  private CorsSection() {}

  static CorsSettings read(Walk walk, Mapping doc) {
    Mapping o = doc.section("cors", KEYS, "a mapping");
    CorsSettings d = CorsSettings.disabled();
    if (o == null) {
      return d;
    }
    List<String> origins = o.list("allowOrigins", "origins like https://app.example.com, or *",
        text -> {
          if (!text.equals("*") && !text.matches("(?i)https?://[^/\\s]+")) {
            throw new IllegalArgumentException(
                "origins like https://app.example.com (scheme and host, no path), or *");
          }
          return text;
        }, d.allowOrigins());
    List<String> methods = o.list("allowMethods", "HTTP methods", TEXT, d.allowMethods());
    List<String> headers = o.list("allowHeaders", "header names", TEXT, d.allowHeaders());
    List<String> expose = o.list("exposeHeaders", "header names", TEXT, d.exposeHeaders());
    boolean credentials = o.get("allowCredentials", "true or false", BOOLEAN,
        d.allowCredentials());
    Duration maxAge = o.get("maxAge", Durations.EXPECTED, DURATION, d.maxAge());
    boolean limitPreflights = o.get("limitPreflights", "true or false", BOOLEAN,
        d.limitPreflights());
    if (credentials && origins.contains("*")) {
      walk.error(o.node("allowCredentials"), o.path("allowCredentials"), "true",
          "false when allowOrigins contains * (browsers reject credentials with a wildcard "
              + "origin; list the origins instead)");
    }
    return new CorsSettings(List.copyOf(origins), List.copyOf(methods), List.copyOf(headers),
        List.copyOf(expose), credentials, maxAge, limitPreflights);
  }
}
