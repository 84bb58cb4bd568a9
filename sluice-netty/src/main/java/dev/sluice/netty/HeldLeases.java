package dev.sluice.netty;

import dev.sluice.core.Lease;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The connection-cap leases of one WebSocket: renewed every third of their time-to-live while the
 * connection is open (without waiting for a remote store's answer), given back when it closes.
 */
final class HeldLeases {

  private List<Lease> leases = List.of();
  private ScheduledFuture<?> renewal;

  void hold(List<Lease> acquired) {
    leases = acquired;
  }

  /** Starts renewing on {@code loop} every third of {@code ttlMillis} (at least every second). */
  void renewEvery(EventExecutor loop, long ttlMillis) {
    if (leases.isEmpty() || renewal != null) {
      return;
    }
    long every = Math.max(ttlMillis, 3_000) / 3;
    renewal = loop.scheduleAtFixedRate(() -> leases.forEach(Lease::renewAsync), every, every,
        TimeUnit.MILLISECONDS);
  }

  /** Stops renewing and gives every lease back; idempotent. */
  void release() {
    if (renewal != null) {
      renewal.cancel(false);
      renewal = null;
    }
    if (!leases.isEmpty()) {
      List<Lease> held = leases;
      leases = List.of();
      held.forEach(Lease::close);
    }
  }
}
