package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.DURATION;
import static dev.sluice.policy.Values.TEXT;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The {@code cors:} section: CORS headers on the responses an adapter generates itself. */
final class CorsSection {

  private static final Field<CorsSettings, List<String>> ORIGINS = Field.list("allowOrigins",
      "origins like https://app.example.com, or *", text -> {
        if (!text.equals("*") && !text.matches("(?i)https?://[^/\\s]+")) {
          throw new IllegalArgumentException(
              "origins like https://app.example.com (scheme and host, no path), or *");
        }
        return text;
      }, CorsSettings::allowOrigins);
  private static final Field<CorsSettings, List<String>> METHODS = Field.list("allowMethods",
      "HTTP methods", TEXT, CorsSettings::allowMethods);
  private static final Field<CorsSettings, List<String>> HEADERS = Field.list("allowHeaders",
      "header names", TEXT, CorsSettings::allowHeaders);
  private static final Field<CorsSettings, List<String>> EXPOSE = Field.list("exposeHeaders",
      "header names", TEXT, CorsSettings::exposeHeaders);
  private static final Field<CorsSettings, Boolean> CREDENTIALS = Field.of("allowCredentials",
      "true or false", BOOLEAN, CorsSettings::allowCredentials);
  private static final Field<CorsSettings, Duration> MAX_AGE = Field.duration("maxAge",
      Durations.EXPECTED, DURATION, CorsSettings::maxAge);
  private static final Field<CorsSettings, Boolean> PREFLIGHTS = Field.of("limitPreflights",
      "true or false", BOOLEAN, CorsSettings::limitPreflights);
  private static final Fields<CorsSettings> FIELDS = new Fields<>(ORIGINS, METHODS, HEADERS,
      EXPOSE, CREDENTIALS, MAX_AGE, PREFLIGHTS);

  static final List<String> KEYS = FIELDS.keys();

  private CorsSection() {}

  static CorsSettings read(Walk walk, Mapping doc) {
    Mapping o = doc.section("cors", KEYS, "a mapping");
    CorsSettings d = CorsSettings.disabled();
    if (o == null) {
      return d;
    }
    Fields<CorsSettings>.Row r = FIELDS.read(o, d);
    List<String> origins = r.get(ORIGINS);
    boolean credentials = r.get(CREDENTIALS);
    if (credentials && origins.contains("*")) {
      walk.error(o.node("allowCredentials"), o.path("allowCredentials"), "true",
          "false when allowOrigins contains * (browsers reject credentials with a wildcard "
              + "origin; list the origins instead)");
    }
    return new CorsSettings(List.copyOf(origins), List.copyOf(r.get(METHODS)),
        List.copyOf(r.get(HEADERS)), List.copyOf(r.get(EXPOSE)), credentials, r.get(MAX_AGE),
        r.get(PREFLIGHTS));
  }

  static Map<String, Object> render(CorsSettings c) {
    return FIELDS.render(c);
  }
}
