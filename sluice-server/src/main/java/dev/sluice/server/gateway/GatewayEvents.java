package dev.sluice.server.gateway;

import dev.sluice.core.Decision;
import dev.sluice.core.Rule;
import java.util.List;

/**
 * What the gateway reports as it works; the server's metrics and logs implement it. Methods are
 * called on I/O threads and must not block.
 */
public interface GatewayEvents {

  /** A decision was made for an HTTP request or a WebSocket connect ({@code kind} "http"/"ws-connect"/"ws-action"). */
  default void decision(String kind, Decision decision) {}

  /**
   * A decision over {@code rules}, the checked list that {@link Decision#refusedBy(int)} indexes;
   * by default {@link #decision(String, Decision)}.
   */
  default void decision(String kind, List<Rule> rules, Decision decision) {
    decision(kind, decision);
  }

  /**
   * Checking {@code rules} threw (a bug, never a limit); each rule's onStoreError answered the
   * request. Called for every failure: throttle any logging.
   */
  default void decisionFailed(String kind, List<Rule> rules, Throwable error) {}

  /**
   * The upstream failed an exchange: {@code status} 502 (could not connect, closed, invalid
   * response) or 504 (no response in time), {@code upstream} its address, {@code cause} what
   * happened. For the log only: the client's body says no more than "bad gateway". Called for
   * every failure: throttle any logging.
   */
  default void upstreamFailed(int status, String upstream, String cause) {}

  /**
   * A refusal started a ban on {@code key}, the key text ({@code Rule#keyText}, without the rule
   * name: what the admin API takes); follows {@link #decision}.
   */
  default void banApplied(String kind, Decision decision, String key) {}

  /** A WebSocket connection to the client was opened (after the upgrade). */
  /** A request skipped every rule: its client is on the policy's {@code allow} list. */
  default void allowlisted(String kind) {}

  /** A request refused by {@code rule} waits for its token (the rule's {@code delay}). */
  default void delayed(String kind, String rule) {}

  default void webSocketOpened() {}

  /** A WebSocket connection was closed with {@code code} (1000, 1008, 1009, 1013, 1006 abnormal...). */
  default void webSocketClosed(int code) {}

  /**
   * A JSON field was checked by the moderation section: {@code surface} like {@code username},
   * {@code reason} like {@code blocked_term}, or {@code none} when it was allowed.
   */
  default void moderated(String surface, String reason) {}

  /** The gateway answered by itself: 413, 414, 431, 502, 504 and so on. */
  default void generated(int status) {}

  /**
   * An exchange completed (its response's last byte was written); called only while the policy's
   * {@code logging.access} is on.
   */
  default void exchange(AccessEntry entry) {}

  /** Events that ignore everything. */
  static GatewayEvents none() {
    return new GatewayEvents() {};
  }
}
