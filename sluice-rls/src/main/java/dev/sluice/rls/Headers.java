package dev.sluice.rls;

import dev.sluice.policy.RlsSettings;
import java.util.function.BiConsumer;

/**
 * The rate-limit headers of a decision answer, for the most restrictive limited descriptor: the
 * IETF draft's {@code RateLimit-Policy: "name";q=10;w=60} and {@code RateLimit:
 * "name";r=3;t=42} (seconds rounded up; {@code t} is the wait until a call would pass when
 * refused), and {@code X-RateLimit-*} where configured. The same fields the gateway sends.
 */
final class Headers {

  private Headers() {}

  static void write(Status s, RlsSettings settings, BiConsumer<String, String> out) {
    long window = Math.max(1, ceilSeconds(s.limit().windowNanos()));
    long t = ceilSeconds(s.resetNanos());
    String name = '"' + s.name().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    if (settings.ietfHeaders()) {
      out.accept("RateLimit-Policy", name + ";q=" + s.limit().capacity() + ";w=" + window);
      out.accept("RateLimit", name + ";r=" + s.remaining() + ";t=" + t);
    }
    if (settings.rateLimitHeaders()) {
      out.accept("X-RateLimit-Limit", Long.toString(s.limit().capacity()));
      out.accept("X-RateLimit-Remaining", Long.toString(s.remaining()));
      out.accept("X-RateLimit-Reset", Long.toString(t));
    }
  }

  static long ceilSeconds(long nanos) {
    return nanos <= 0 ? 0 : (nanos + 999_999_999L) / 1_000_000_000L;
  }
}
