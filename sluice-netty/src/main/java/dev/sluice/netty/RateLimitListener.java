package dev.sluice.netty;

import dev.sluice.core.Decision;
import dev.sluice.core.Rule;
import java.util.List;

/**
 * What the handlers report as they work, for metrics and logs. Methods are called on I/O threads
 * and must not block; every method does nothing by default.
 */
public interface RateLimitListener {

  /** Decision kinds passed to {@link #decision}. */
  String HTTP = "http";
  String WS_CONNECT = "ws-connect";
  String WS_ACTION = "ws-action";

  /** A decision was made: {@code kind} is {@link #HTTP}, {@link #WS_CONNECT} or {@link #WS_ACTION}. */
  default void decision(String kind, Decision decision) {}

  /**
   * A decision over {@code rules}, the list that was checked: {@link Decision#refusedBy(int)}
   * indexes it, so a listener can account for every evaluated rule, not only the deciding one
   * (a global backstop spends its quota on requests another rule decides). By default it calls
   * {@link #decision(String, Decision)}.
   */
  default void decision(String kind, List<Rule> rules, Decision decision) {
    decision(kind, decision);
  }

  /**
   * Checking {@code rules} threw (empty when selecting them did): a bug in a policy, a store or
   * a selector, never a limit. The request was answered as if the store had failed: by each
   * rule's {@code OnStoreError}. Called for every failure; by default it is logged with its
   * stack trace at most once per rule per minute.
   */
  default void decisionFailed(String kind, List<Rule> rules, Throwable error) {
    FailureLog.SHARED.failed(kind, rules, error);
  }

  /**
   * A refusal started a ban (seed 003: log it once, with the key). Called after
   * {@link #decision} for the same decision; {@code key} is the banned key's text
   * ({@code Rule#keyText}, without the rule name: what the admin API takes).
   */
  default void banApplied(String kind, Decision decision, String key) {}

  /** A request skipped every rule because its client is on the policy's {@code allow} list. */
  default void allowlisted(String kind) {}

  /**
   * A request that {@code rule} refused waits for its token instead (the rule's {@code delay});
   * its final decision is reported by {@link #decision} when the wait ends.
   */
  default void delayed(String kind, String rule) {}

  /** A WebSocket connection to the client was opened (after the upgrade). */
  default void webSocketOpened() {}

  /** A WebSocket connection was closed with {@code code} (1006 when no close frame was seen). */
  default void webSocketClosed(int code) {}

  /** A handler answered by itself with {@code status} (429, 413, 431, 502...). */
  default void generated(int status) {}

  /** A listener that ignores everything. */
  static RateLimitListener none() {
    return NoListener.INSTANCE;
  }
}

final class NoListener implements RateLimitListener {
  static final NoListener INSTANCE = new NoListener();

  private NoListener() {}
}
