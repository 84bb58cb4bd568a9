package dev.sluice.core;

import java.util.List;

/**
 * A store that cannot answer, as Redis past its deadline: every call throws
 * {@link StoreException}. Shared with other modules' tests through core's test jar.
 */
public class FailingStore implements Store {

  private static StoreException down() {
    return new StoreException("down");
  }

  @Override
  public void evaluate(List<Rule> rules, Identity identity, long cost, Verdicts out) {
    throw down();
  }

  @Override
  public long acquire(String key, int max, long ttlNanos) {
    throw down();
  }

  @Override
  public boolean renew(String key, long lease, long ttlNanos) {
    throw down();
  }

  @Override
  public void release(String key, long lease) {
    throw down();
  }

  @Override
  public int leases(String key) {
    throw down();
  }

  @Override
  public Verdict cooldown(String key, Cooldown policy, Cooldown.Event event) {
    throw down();
  }

  @Override
  public long size() {
    return 0;
  }
}
