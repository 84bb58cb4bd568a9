package dev.sluice.core;

import java.util.concurrent.CompletionStage;

/** A held concurrency slot. Closing is idempotent; an unrenewed lease expires on its own. */
public interface Lease extends AutoCloseable {

  /** Extends the lease by its time-to-live; false if it had already expired. */
  boolean renew();

  /** {@link #renew()} without waiting on a remote store: the stage completes with its answer. */
  CompletionStage<Boolean> renewAsync();

  /** True when the store failed and the limit's {@link OnStoreError#ALLOW} let this through. */
  boolean degraded();

  /** Gives the slot back, without waiting for a remote store's answer. Safe to call twice. */
  @Override
  void close();
}
