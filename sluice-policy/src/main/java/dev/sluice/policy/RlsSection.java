package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;

import java.util.List;

/** The {@code rls:} section; see {@link RlsSettings}. */
final class RlsSection {

  static final List<String> KEYS = List.of("listen", "ietfHeaders", "rateLimitHeaders",
      "maxDescriptors", "maxEntries", "maxValueBytes", "checkApi", "checkApiLimit");
  static final List<String> BUCKET_KEYS = List.of("burst", "refill", "period");

  private RlsSection() {}

  static RlsSettings read(Walk walk, Mapping doc) {
    RlsSettings d = RlsSettings.defaults();
    Mapping m = doc.section("rls", KEYS, "a mapping with listen:, ietfHeaders:, ...");
    if (m == null) {
      return d;
    }
    String listen = m.get("listen", "HOST:PORT, like 127.0.0.1:8081", text -> {
      int colon = text.lastIndexOf(':');
      if (colon < 0 || !text.substring(colon + 1).matches("[0-9]{1,5}")
          || Integer.parseInt(text.substring(colon + 1)) > 65535) {
        throw new IllegalArgumentException("HOST:PORT, like 127.0.0.1:8081");
      }
      return text.trim();
    }, null);
    return new RlsSettings(listen,
        m.get("ietfHeaders", "true or false", BOOLEAN, d.ietfHeaders()),
        m.get("rateLimitHeaders", "true or false", BOOLEAN, d.rateLimitHeaders()),
        m.get("maxDescriptors", "1..64", Values.integer(1, RlsDescriptor.MAX_DESCRIPTORS),
            d.maxDescriptors()),
        m.get("maxEntries", "1..64", Values.integer(1, 64), d.maxEntries()),
        m.get("maxValueBytes", "1..65536", Values.integer(1, 65536), d.maxValueBytes()),
        m.get("checkApi", RlsSettings.CHECK_API_EXPECTED, RlsSettings::checkApiPlace,
            d.checkApi()),
        bucket(walk, m, "checkApiLimit", d.checkApiLimit()));
  }

  private static RlsSettings.Bucket bucket(Walk walk, Mapping m, String key,
      RlsSettings.Bucket d) {
    Mapping b = Mapping.of(walk, m.node(key), m.path(key), BUCKET_KEYS,
        "a mapping with burst:, refill: and period:");
    if (b == null) {
      return d;
    }
    return new RlsSettings.Bucket(
        b.get("burst", "a whole number > 0", Values.wholeNumber(1, Integer.MAX_VALUE), d.burst()),
        b.get("refill", "a whole number > 0", Values.wholeNumber(1, Integer.MAX_VALUE),
            d.refill()),
        b.get("period", Durations.EXPECTED, Values.POSITIVE_DURATION, d.period()));
  }
}
