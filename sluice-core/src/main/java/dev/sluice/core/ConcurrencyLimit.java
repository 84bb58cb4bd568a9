package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.time.Duration;

/**
 * A cap on concurrent holders per key (seed 001: 55 WebSockets per IP, 3 per session token, 75
 * for the shared unresolved bucket). Each holder takes a {@link Lease}; a lease that is not
 * renewed within {@code leaseTtl} expires, so a crashed holder cannot keep a slot forever.
 */
public final class ConcurrencyLimit {

  private final String name;
  private final KeyTemplate key;
  private final int max;
  private final long leaseTtl;
  private final OnStoreError onStoreError;

  private ConcurrencyLimit(String name, String key, int max, Duration leaseTtl,
      OnStoreError onStoreError) {
    this.name = Checks.name(name, "name");
    this.key = KeyTemplate.parse(key);
    this.max = (int) Checks.capacity(max, "max");
    this.leaseTtl = Checks.duration(leaseTtl, "leaseTtl");
    this.onStoreError = Checks.notNull(onStoreError, "onStoreError");
  }

  /**
   * A cap of {@code max} concurrent leases per key built from {@code key} (a template such as
   * {@code "ip"} or {@code "session"}); leases expire after {@code leaseTtl} unless renewed.
   */
  public static ConcurrencyLimit of(String name, String key, int max, Duration leaseTtl,
      OnStoreError onStoreError) {
    return new ConcurrencyLimit(name, key, max, leaseTtl, onStoreError);
  }

  public String name() {
    return name;
  }

  public int max() {
    return max;
  }

  public Duration leaseTtl() {
    return Duration.ofNanos(leaseTtl);
  }

  long leaseTtlNanos() {
    return leaseTtl;
  }

  public OnStoreError onStoreError() {
    return onStoreError;
  }

  /** The store key of {@code identity}. */
  public String keyFor(Identity identity) {
    return key.keyOf(KeyTemplate.escape(name), identity, "unknown");
  }

  @Override
  public String toString() {
    return "ConcurrencyLimit{" + name + ", key=" + key + ", max=" + max + ", leaseTtl="
        + leaseTtl() + ", onStoreError=" + onStoreError + "}";
  }
}
