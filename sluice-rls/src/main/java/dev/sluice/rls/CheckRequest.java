package dev.sluice.rls;

import dev.sluice.policy.RlsDomains;
import dev.sluice.policy.RlsSettings;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One decision request, from gRPC or JSON alike: a domain, its descriptors in order, and the
 * request's hits. Checked once against the {@code rls:} bounds by {@link #validate}.
 *
 * @param domain the domain
 * @param descriptors the descriptors, in the order their statuses are answered
 * @param hits the request's {@code hits_addend}; 0 reads as 1, as envoyproxy/ratelimit does
 */
record CheckRequest(String domain, List<Descriptor> descriptors, long hits) {

  /**
   * One descriptor.
   *
   * @param keys the entry keys
   * @param values the entry values
   * @param overrideUnit the request's {@code limit} override's unit ({@code second}...), or null
   * @param overrideRequests the override's {@code requests_per_unit}
   * @param hits this descriptor's {@code hits_addend}, or -1 for the request's (0 checks
   *     without consuming)
   */
  record Descriptor(String[] keys, String[] values, String overrideUnit, long overrideRequests,
      long hits) implements RlsDomains.Entries {

    @Override
    public int size() {
      return keys.length;
    }

    @Override
    public String key(int i) {
      return keys[i];
    }

    @Override
    public String value(int i) {
      return values[i];
    }

    /** The entries as one counter value: {@code key=value} pairs, in order. */
    String joined() {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < keys.length; i++) {
        if (i > 0) {
          sb.append('\u001f');
        }
        sb.append(keys[i]).append('=').append(values[i]);
      }
      return sb.toString();
    }
  }

  /** Thrown for a request the service cannot decide; the message says what and why. */
  static final class Invalid extends Exception {
    Invalid(String message) {
      super(message, null, false, false);
    }
  }

  /** Checks the request against {@code limits}; throws with a message naming the field. */
  void validate(RlsSettings limits) throws Invalid {
    if (domain == null || domain.isBlank()) {
      throw new Invalid("domain : missing (expected: the domain of the descriptors)");
    }
    bytes("domain", domain, limits);
    if (descriptors.isEmpty()) {
      throw new Invalid("descriptors : [] (expected: at least one descriptor)");
    }
    if (descriptors.size() > limits.maxDescriptors()) {
      throw new Invalid("descriptors : " + descriptors.size() + " descriptors (expected: at most "
          + limits.maxDescriptors() + ")");
    }
    for (int d = 0; d < descriptors.size(); d++) {
      Descriptor desc = descriptors.get(d);
      String at = "descriptors[" + d + "]";
      if (desc.keys.length == 0) {
        throw new Invalid(at + ".entries : [] (expected: at least one entry)");
      }
      if (desc.keys.length > limits.maxEntries()) {
        throw new Invalid(at + ".entries : " + desc.keys.length + " entries (expected: at most "
            + limits.maxEntries() + ")");
      }
      for (int i = 0; i < desc.keys.length; i++) {
        if (desc.keys[i] == null || desc.keys[i].isEmpty()) {
          throw new Invalid(at + ".entries[" + i + "].key : empty (expected: a key)");
        }
        bytes(at + ".entries[" + i + "].key", desc.keys[i], limits);
        bytes(at + ".entries[" + i + "].value", desc.values[i], limits);
      }
      if (desc.overrideUnit != null && desc.overrideRequests < 0) {
        throw new Invalid(at + ".limit.requests_per_unit : " + desc.overrideRequests
            + " (expected: >= 0)");
      }
    }
  }

  private static void bytes(String field, String text, RlsSettings limits) throws Invalid {
    // A UTF-8 string is at least as many bytes as chars and at most three times as many.
    if (text.length() > limits.maxValueBytes()
        || text.getBytes(StandardCharsets.UTF_8).length > limits.maxValueBytes()) {
      throw new Invalid(field + " : " + text.getBytes(StandardCharsets.UTF_8).length
          + " bytes (expected: at most " + limits.maxValueBytes() + ")");
    }
  }
}
