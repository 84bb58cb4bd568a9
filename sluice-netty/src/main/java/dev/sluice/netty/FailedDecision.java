package dev.sluice.netty;

import dev.sluice.core.Cooldown;
import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Verdict;
import java.util.List;

/**
 * The decision for a check that threw: each rule's {@code OnStoreError}, exactly as when the
 * store fails. Core builds that degraded decision only for a failing store, so it is asked with a
 * store that always fails, at cost 1 (the cost may be what threw) and with an empty identity (the
 * failing store never reads keys): an enforcing {@code DENY} rule refuses, otherwise the request
 * passes, and either way the decision is marked degraded.
 */
final class FailedDecision {

  private static final RateLimiter FAILING = RateLimiter.of(new FailingStore());

  private FailedDecision() {}

  /** The degraded decision for {@code rules}; null (let through) when there are none. */
  static Decision of(List<Rule> rules) {
    if (rules.isEmpty()) {
      return null;
    }
    try {
      return FAILING.check(rules, Identity.empty(), 1);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static final class FailingStore implements Store {
    private static StoreException failed() {
      return new StoreException("the decision failed");
    }

    @Override
    public List<Verdict> evaluate(List<Rule> rules, List<String> keys, long cost) {
      throw failed();
    }

    @Override
    public long acquire(String key, int max, long ttlNanos) {
      throw failed();
    }

    @Override
    public boolean renew(String key, long lease, long ttlNanos) {
      throw failed();
    }

    @Override
    public void release(String key, long lease) {
      throw failed();
    }

    @Override
    public int leases(String key) {
      throw failed();
    }

    @Override
    public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
      throw failed();
    }

    @Override
    public long size() {
      return 0;
    }
  }
}
