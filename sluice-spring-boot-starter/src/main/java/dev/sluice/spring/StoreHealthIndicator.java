package dev.sluice.spring;

import dev.sluice.core.Store;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The store's health: up while it answers (the tracked key count is asked), down with the reason
 * when it does not. Decisions keep being made either way, by each rule's {@code onStoreError}.
 */
class StoreHealthIndicator extends AbstractHealthIndicator {

  private final Store store;

  StoreHealthIndicator(Store store) {
    super("Sluice store check failed");
    this.store = store;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    long keys = store.size();
    builder.up().withDetail("store", store.isLocal() ? "memory" : "redis")
        .withDetail("trackedKeys", keys);
  }
}
