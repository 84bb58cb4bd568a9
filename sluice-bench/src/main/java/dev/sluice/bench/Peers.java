package dev.sluice.bench;

import com.google.common.util.concurrent.RateLimiter;
import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.LocalBucketBuilder;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;

/**
 * The limits every library gets: the same token bucket, in each library's own terms.
 *
 * <p><b>Hot key:</b> a token bucket of {@value #RATE} tokens, refilled greedily (continuously) at
 * {@value #RATE} per second.
 *
 * <p>Why so large: we measure the cost of a decision, not of a refusal. Two threads on this
 * machine reach at most a few times 10^7 checks per second, so a bucket that refills 10^9 tokens
 * per second never runs dry and every call takes the "allowed" path in every library. The
 * libraries express it in their own terms: Sluice and Bucket4j as burst 10^9 refilled at 10^9 per
 * second (one token per nanosecond; Bucket4j with nanosecond precision, like Sluice's
 * {@code System.nanoTime()} ticker), Guava as 10^9 permits per second (its bursty limiter stores up
 * to one second of permits), Resilience4j as 10^9 permissions per 1-second cycle with no wait.
 *
 * <p><b>Many keys:</b> a token bucket of {@value #KEYED_BURST} tokens refilled at
 * {@value #KEYED_REFILL} per day, one token per 86.4 s. The hot-key bucket would not do here: it
 * is full again a nanosecond after each call, and Sluice's store rightly drops full buckets (they
 * decide exactly like an absent key), so we would measure key creation instead of tracked keys.
 * With this one a key stays tracked (not full) for 86.4 s after its call, longer than a JMH run,
 * while 1,000,000 keys sharing under a million calls per second get about one call per key per
 * second, far from the {@value #KEYED_BURST} that would refuse.
 */
final class Peers {

  static final int RATE = 1_000_000_000;

  /** The flood bucket: 10 burst, refilled at 1 per second; drained, it refuses every call. */
  static final int FLOOD_BURST = 10;

  static final int KEYED_BURST = 100_000;
  static final int KEYED_REFILL = 1_000;

  /** The rule name, which prefixes every Sluice store key ({@code "api:203.0.113.7"}). */
  static final String RULE = "api";

  private static final Bandwidth BANDWIDTH =
      Bandwidth.builder().capacity(RATE).refillGreedy(RATE, Duration.ofSeconds(1)).build();

  private static final Bandwidth KEYED_BANDWIDTH = Bandwidth.builder().capacity(KEYED_BURST)
      .refillGreedy(KEYED_REFILL, Duration.ofDays(1)).build();

  private Peers() {}

  static Rule sluiceKeyedRule() {
    return Rule.builder(RULE)
        .limit(Limit.tokenBucket("rate", KEYED_BURST, KEYED_REFILL, Duration.ofDays(1)))
        .build();
  }

  static Bucket bucket4jKeyed() {
    return Bucket.builder()
        .addLimit(KEYED_BANDWIDTH)
        .withNanosecondPrecision()
        .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
        .build();
  }

  static Rule sluiceFloodRule() {
    return Rule.builder(RULE)
        .limit(Limit.tokenBucket("rate", FLOOD_BURST, 1, Duration.ofSeconds(1)))
        .build();
  }

  static Bandwidth floodLimit() {
    return Bandwidth.builder().capacity(FLOOD_BURST).refillGreedy(1, Duration.ofSeconds(1))
        .build();
  }

  static Rule sluiceRule() {
    return Rule.builder(RULE)
        .limit(Limit.tokenBucket("rate", RATE, RATE, Duration.ofSeconds(1)))
        .build();
  }

  /** A lock-free (compare-and-swap) Bucket4j bucket, the library's default strategy. */
  static Bucket bucket4j() {
    return bucket4j(BANDWIDTH, null);
  }

  /** A lock-free bucket with {@code limit}, on {@code clock} (null: nanosecond system time). */
  static Bucket bucket4j(Bandwidth limit, TimeMeter clock) {
    LocalBucketBuilder b = Bucket.builder().addLimit(limit);
    (clock == null ? b.withNanosecondPrecision() : b.withCustomTimePrecision(clock))
        .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE);
    return b.build();
  }

  static Bandwidth hotKeyLimit() {
    return BANDWIDTH;
  }

  static AtomicRateLimiter resilience4j() {
    return new AtomicRateLimiter("bench", RateLimiterConfig.custom()
        .limitForPeriod(RATE)
        .limitRefreshPeriod(Duration.ofSeconds(1))
        .timeoutDuration(Duration.ZERO)
        .build());
  }

  static RateLimiter guava() {
    return RateLimiter.create(RATE);
  }
}
