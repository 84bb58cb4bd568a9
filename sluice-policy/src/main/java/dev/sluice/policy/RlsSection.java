package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The {@code rls:} section; see {@link RlsSettings}. */
final class RlsSection {

  private static final Field<RlsSettings.Bucket, Long> BURST = Field.of("burst",
      "a whole number > 0", Values.wholeNumber(1, Integer.MAX_VALUE), RlsSettings.Bucket::burst);
  private static final Field<RlsSettings.Bucket, Long> REFILL = Field.of("refill",
      "a whole number > 0", Values.wholeNumber(1, Integer.MAX_VALUE),
      RlsSettings.Bucket::refill);
  private static final Field<RlsSettings.Bucket, Duration> PERIOD = Field.duration("period",
      Durations.EXPECTED, Values.POSITIVE_DURATION, RlsSettings.Bucket::period);
  private static final Fields<RlsSettings.Bucket> BUCKET = new Fields<>(BURST, REFILL, PERIOD);

  private static final Field<RlsSettings, String> LISTEN = Field.of("listen",
      "HOST:PORT, like 127.0.0.1:8081", text -> {
        int colon = text.lastIndexOf(':');
        if (colon < 0 || !text.substring(colon + 1).matches("[0-9]{1,5}")
            || Integer.parseInt(text.substring(colon + 1)) > 65535) {
          throw new IllegalArgumentException("HOST:PORT, like 127.0.0.1:8081");
        }
        return text.trim();
      }, RlsSettings::listen);
  private static final Field<RlsSettings, Boolean> IETF = Field.of("ietfHeaders",
      "true or false", BOOLEAN, RlsSettings::ietfHeaders);
  private static final Field<RlsSettings, Boolean> RATE_LIMIT_HEADERS = Field.of(
      "rateLimitHeaders", "true or false", BOOLEAN, RlsSettings::rateLimitHeaders);
  private static final Field<RlsSettings, Integer> MAX_DESCRIPTORS = Field.of("maxDescriptors",
      "1..64", Values.integer(1, RlsDescriptor.MAX_DESCRIPTORS), RlsSettings::maxDescriptors);
  private static final Field<RlsSettings, Integer> MAX_ENTRIES = Field.of("maxEntries", "1..64",
      Values.integer(1, 64), RlsSettings::maxEntries);
  private static final Field<RlsSettings, Integer> MAX_VALUE_BYTES = Field.of("maxValueBytes",
      "1..65536", Values.integer(1, 65536), RlsSettings::maxValueBytes);
  private static final Field<RlsSettings, String> CHECK_API = Field.of("checkApi",
      RlsSettings.CHECK_API_EXPECTED, RlsSettings::checkApiPlace, RlsSettings::checkApi);
  private static final Field<RlsSettings, RlsSettings.Bucket> CHECK_API_LIMIT =
      Field.readBySection("checkApiLimit", RlsSettings::checkApiLimit, BUCKET::render);
  private static final Fields<RlsSettings> FIELDS = new Fields<>(LISTEN, IETF,
      RATE_LIMIT_HEADERS, MAX_DESCRIPTORS, MAX_ENTRIES, MAX_VALUE_BYTES, CHECK_API,
      CHECK_API_LIMIT);

  static final List<String> KEYS = FIELDS.keys();
  static final List<String> BUCKET_KEYS = BUCKET.keys();

  private RlsSection() {}

  static RlsSettings read(Walk walk, Mapping doc) {
    RlsSettings d = RlsSettings.defaults();
    Mapping m = doc.section("rls", KEYS, "a mapping with listen:, ietfHeaders:, ...");
    if (m == null) {
      return d;
    }
    Fields<RlsSettings>.Row r = FIELDS.read(m, d);
    return new RlsSettings(r.get(LISTEN), r.get(IETF), r.get(RATE_LIMIT_HEADERS),
        r.get(MAX_DESCRIPTORS), r.get(MAX_ENTRIES), r.get(MAX_VALUE_BYTES), r.get(CHECK_API),
        bucket(walk, m, "checkApiLimit", d.checkApiLimit()));
  }

  static Map<String, Object> render(RlsSettings r) {
    return FIELDS.render(r);
  }

  private static RlsSettings.Bucket bucket(Walk walk, Mapping m, String key,
      RlsSettings.Bucket d) {
    Mapping b = Mapping.of(walk, m.node(key), m.path(key), BUCKET_KEYS,
        "a mapping with burst:, refill: and period:");
    if (b == null) {
      return d;
    }
    Fields<RlsSettings.Bucket>.Row r = BUCKET.read(b, d);
    return new RlsSettings.Bucket(r.get(BURST), r.get(REFILL), r.get(PERIOD));
  }
}
