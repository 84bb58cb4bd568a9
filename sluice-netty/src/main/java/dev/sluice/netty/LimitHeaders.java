package dev.sluice.netty;

import dev.sluice.core.Decision;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * Writes a decision as {@code X-RateLimit-*} and as the IETF draft {@code RateLimit-Policy} /
 * {@code RateLimit} fields.
 *
 * <p>For seed 000's analysis bucket (burst 15, 30 per minute) after the 15th call:
 * {@code X-RateLimit-Limit: 15}, {@code X-RateLimit-Remaining: 0}, {@code X-RateLimit-Reset: 30}
 * (seconds until the bucket is full again), {@code RateLimit-Policy: "analysis";q=15;w=30} (the
 * window is the time to refill from empty) and {@code RateLimit: "analysis";r=0;t=30}. On the
 * 16th, refused, {@code t} is the wait until a call would pass instead: {@code t=2}, one token at
 * 30 per minute. Seconds are rounded up.
 */
final class LimitHeaders {

  static final String X_LIMIT = "X-RateLimit-Limit";
  static final String X_REMAINING = "X-RateLimit-Remaining";
  static final String X_RESET = "X-RateLimit-Reset";
  static final String POLICY = "RateLimit-Policy";
  static final String RATELIMIT = "RateLimit";

  private LimitHeaders() {}

  static void add(HttpHeaders h, Decision d, boolean legacy, boolean ietf) {
    if (d == null || d.rule() == null || d.limit() < 0) {
      return;
    }
    long remaining = Math.max(0, d.remaining());
    long reset = ceilSeconds(d.resetNanos());
    if (legacy) {
      h.set(X_LIMIT, d.limit());
      h.set(X_REMAINING, remaining);
      h.set(X_RESET, reset);
    }
    if (ietf) {
      String name = sfString(policyName(d));
      h.set(POLICY, name + ";q=" + d.limit() + ";w=" + Math.max(1, ceilSeconds(d.windowNanos())));
      h.set(RATELIMIT, name + ";r=" + remaining + ";t=" + (d.allowed() ? reset : d.retryAfterSeconds()));
    }
  }

  static String policyName(Decision d) {
    String rule = d.rule();
    String limit = d.limitName();
    return limit == null || limit.equals(rule) ? rule : rule + "/" + limit;
  }

  static long ceilSeconds(long nanos) {
    return nanos <= 0 ? 0 : -Math.floorDiv(-nanos, 1_000_000_000L);
  }

  /** An RFC 8941 string: printable ASCII only, with quote and backslash escaped. */
  static String sfString(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c >= 0x20 && c < 0x7f) {
        sb.append(c);
      } else {
        sb.append('?');
      }
    }
    return sb.append('"').toString();
  }
}
