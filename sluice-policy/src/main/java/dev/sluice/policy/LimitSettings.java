package dev.sluice.policy;

import dev.sluice.core.Limit;
import java.time.Duration;

/**
 * One limit of a rule as the file says it; {@link #toLimit()} is core's. Kept as written because
 * core normalises (30 per minute becomes one token per 2 s), and the effective policy shows what
 * the operator wrote.
 *
 * @param type {@code token-bucket}, {@code fixed-window}, {@code sliding-window},
 *     {@code sliding-log} or {@code score}
 * @param name the limit's name (the rule's, for a rule of one limit, or the type)
 * @param count {@code burst} or {@code limit}; unused for a score
 * @param refill a token bucket's refill per {@code period}; 0 otherwise
 * @param period a token bucket's period, a window, or a score's decay
 * @param maxScore a score's maximum; NaN otherwise
 * @param perAction a score's points per call; NaN otherwise
 */
public record LimitSettings(String type, String name, long count, long refill, Duration period,
    double maxScore, double perAction) {

  /** Core's limit; throws core's {@code InvalidValueException} for impossible values. */
  public Limit toLimit() {
    return switch (type) {
      case "token-bucket" -> Limit.tokenBucket(name, count, refill, period);
      case "fixed-window" -> Limit.fixedWindow(name, count, period);
      case "sliding-window" -> Limit.slidingWindow(name, count, period);
      case "sliding-log" -> Limit.slidingLog(name, (int) count, period);
      case "score" -> Limit.score(name, maxScore, perAction, period);
      default -> throw new IllegalStateException("type : " + type);
    };
  }
}
