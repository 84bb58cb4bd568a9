package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Which HTTP response statuses a rule counts, for rules decided on the upstream's answer (a
 * wrong password is a 401, a wrong invite code a 404): a list of statuses, or every failure
 * (400..599, express-rate-limit's {@code skipSuccessfulRequests}) or every success (100..399,
 * its {@code skipFailedRequests}). Immutable.
 */
public final class StatusSet {

  private static final StatusSet FAILURES = new StatusSet(range(400, 599), "failure");
  private static final StatusSet SUCCESSES = new StatusSet(range(100, 399), "success");

  /** Bit s set: status s counts (100..599). */
  private final long[] bits;
  /** "failure" or "success" for the two ranges (what {@code skip:} leaves out), else null. */
  private final String skipped;

  private StatusSet(long[] bits, String counted) {
    this.bits = bits;
    this.skipped = counted == null ? null : counted.equals("failure") ? "success" : "failure";
  }

  /** The given statuses, each 100..599. */
  public static StatusSet of(List<Integer> statuses) {
    Checks.notNull(statuses, "countStatus");
    if (statuses.isEmpty()) {
      throw Checks.invalid("countStatus", "[]", "at least one status like 401");
    }
    long[] bits = new long[10];
    for (Integer s : statuses) {
      if (s == null || s < 100 || s > 599) {
        throw Checks.invalid("countStatus", s, "HTTP statuses 100..599");
      }
      bits[s >>> 6] |= 1L << (s & 63);
    }
    return new StatusSet(bits, null);
  }

  /** Every failure: 400..599 (a rule that skips successful responses). */
  public static StatusSet failures() {
    return FAILURES;
  }

  /** Every success: 100..399 (a rule that skips failed responses). */
  public static StatusSet successes() {
    return SUCCESSES;
  }

  private static long[] range(int from, int to) {
    long[] bits = new long[10];
    for (int s = from; s <= to; s++) {
      bits[s >>> 6] |= 1L << (s & 63);
    }
    return bits;
  }

  /** Whether a response of {@code status} counts. */
  public boolean contains(int status) {
    return status >= 100 && status <= 599 && (bits[status >>> 6] & (1L << (status & 63))) != 0;
  }

  /** {@code success} or {@code failure} when this is all but that range, else null. */
  public String skipped() {
    return skipped;
  }

  /** The statuses, in order. */
  public List<Integer> statuses() {
    List<Integer> out = new ArrayList<>();
    for (int s = 100; s <= 599; s++) {
      if (contains(s)) {
        out.add(s);
      }
    }
    return Collections.unmodifiableList(out);
  }

  @Override
  public String toString() {
    return skipped != null ? "all but " + skipped : statuses().toString();
  }
}
