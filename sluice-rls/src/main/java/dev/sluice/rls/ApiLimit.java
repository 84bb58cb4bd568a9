package dev.sluice.rls;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.policy.RlsSettings;

/**
 * The decision API's own limit ({@code rls.checkApiLimit}): one token bucket over all callers,
 * kept in a memory store of its own, so a flood of decision requests is refused before it
 * reaches the policy's store and before it spends any key's quota. One bucket and not one per
 * caller: the API is meant for a few trusted services on loopback, and what it protects is the
 * store and the counters behind it, whoever sends.
 *
 * <p>A reload that changes the bucket starts a fresh one (a new rule name), which is at most one
 * burst more than the old bucket had left.
 */
final class ApiLimit {

  private final RateLimiter limiter;
  private volatile Entry current;

  private record Entry(RlsSettings.Bucket bucket, Rule rule) {}

  ApiLimit(Ticker ticker) {
    this.limiter = RateLimiter.of(Store.memory(ticker, 16));
  }

  /** Takes one token; the decision says when the next would pass when refused. */
  Decision take(RlsSettings.Bucket bucket) {
    Entry e = current;
    if (e == null || !e.bucket.equals(bucket)) {
      e = new Entry(bucket, Rule.builder("check-api-" + bucket.burst() + "-" + bucket.refill()
          + "-" + bucket.period().toNanos())
          .limit(Limit.tokenBucket("checkApiLimit", bucket.burst(), bucket.refill(),
              bucket.period()))
          .build());
      current = e;
    }
    return limiter.check(e.rule, Identity.empty());
  }
}
