package dev.sluice.core.http;

import dev.sluice.core.Decision;
import java.util.Objects;

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
public final class LimitHeaders {

  public static final String X_LIMIT = "X-RateLimit-Limit";
  public static final String X_REMAINING = "X-RateLimit-Remaining";
  public static final String X_RESET = "X-RateLimit-Reset";
  public static final String POLICY = "RateLimit-Policy";
  public static final String RATELIMIT = "RateLimit";

  /**
   * The texts that stay the same from one decision of a limit to the next. Every response of a
   * limited route needs them, so the last one is kept: an immutable object in a plain field, so
   * a thread that reads another thread's entry sees it whole, and a miss only rebuilds it.
   */
  private static Shape last;

  private LimitHeaders() {}

  /**
   * Writes {@code d}'s headers: the {@code X-RateLimit-*} family when {@code legacy}, the IETF
   * fields when {@code ietf}. A decision without a rule or a known limit (a ban) writes none.
   */
  public static void write(Decision d, boolean legacy, boolean ietf, Headers out) {
    if (d == null || d.rule() == null || d.limit() < 0 || (!legacy && !ietf)) {
      return;
    }
    long remaining = Math.max(0, d.remaining());
    long reset = ceilSeconds(d.resetNanos());
    Shape shape = shape(d);
    if (legacy) {
      out.set(X_LIMIT, shape.limit);
      out.set(X_REMAINING, "", remaining);
      out.set(X_RESET, "", reset);
    }
    if (ietf) {
      out.set(POLICY, shape.policy);
      out.set(RATELIMIT, shape.remainingPrefix, remaining, ";t=",
          d.allowed() ? reset : d.retryAfterSeconds());
    }
  }

  private static Shape shape(Decision d) {
    Shape s = last;
    long window = Math.max(1, ceilSeconds(d.windowNanos()));
    if (s != null && s.limitValue == d.limit() && s.window == window
        && s.rule.equals(d.rule()) && Objects.equals(s.limitName, d.limitName())) {
      return s;
    }
    String name = sfString(policyName(d));
    s = new Shape(d.rule(), d.limitName(), d.limit(), window, Long.toString(d.limit()),
        name + ";r=", name + ";q=" + d.limit() + ";w=" + window);
    last = s;
    return s;
  }

  private record Shape(String rule, String limitName, long limitValue, long window, String limit,
      String remainingPrefix, String policy) {}

  /** {@code rule}, or {@code rule/limit} when a rule's limits have names of their own. */
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
