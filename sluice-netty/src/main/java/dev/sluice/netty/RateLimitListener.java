package dev.sluice.netty;

import dev.sluice.core.DecisionListener;

import dev.sluice.core.Decision;
import dev.sluice.core.Rule;
import java.util.List;

/**
 * What the Netty handlers report as they work, for metrics and logs: core's
 * {@link DecisionListener} (every decision, failure, ban, allow-listed and delayed request, and
 * generated answer, as the admission step reports them) and the WebSocket connections. Methods are
 * called on I/O threads and must not block; every method does nothing by default, except that a
 * failed decision is logged with its stack trace at most once per rule per minute.
 */
public interface RateLimitListener extends DecisionListener {

  @Override
  default void decisionFailed(String kind, List<Rule> rules, Throwable error) {
    FailureLog.SHARED.failed(kind, rules, error);
  }

  /** A WebSocket connection to the client was opened (after the upgrade). */
  default void webSocketOpened() {}

  /** A WebSocket connection was closed with {@code code} (1006 when no close frame was seen). */
  default void webSocketClosed(int code) {}

  /** A listener that ignores everything. */
  static RateLimitListener none() {
    return NoListener.INSTANCE;
  }
}

final class NoListener implements RateLimitListener {
  static final NoListener INSTANCE = new NoListener();

  private NoListener() {}
}
