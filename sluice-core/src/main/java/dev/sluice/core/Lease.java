package dev.sluice.core;

/** A held concurrency slot. Closing is idempotent; an unrenewed lease expires on its own. */
public interface Lease extends AutoCloseable {

  /** Extends the lease by its time-to-live; false if it had already expired. */
  boolean renew();

  /** True when the store failed and the limit's {@link OnStoreError#ALLOW} let this through. */
  boolean degraded();

  /** Gives the slot back. Safe to call more than once. */
  @Override
  void close();
}
