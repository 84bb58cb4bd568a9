package dev.sluice.core;

import java.util.List;

/**
 * What an adapter reports about its decisions, for metrics and logs: the one listener of the
 * admission step ({@link dev.sluice.core.policy.Admission}), which every adapter calls, so the
 * gateway, the Netty handlers, the servlet filter and the Spring starter report alike;
 * {@code sluice-micrometer}'s binder implements it. Called on request threads and I/O threads:
 * implementations must not block. Every method does nothing by default.
 */
public interface DecisionListener {

  /** An HTTP request's decision. */
  String HTTP = "http";
  /** A WebSocket upgrade's decision (the connect rules). */
  String WS_CONNECT = "ws-connect";
  /** A WebSocket message's decision (a per-action rule). */
  String WS_ACTION = "ws-action";

  /**
   * {@code rules} were checked for one request ({@link Decision#refusedBy(int)} indexes them) and
   * the decision took {@code nanos} from asking the store to the answer.
   */
  default void decision(String kind, List<Rule> rules, Decision decision, long nanos) {}

  /** Checking {@code rules} threw: a bug, never a limit; each rule's onStoreError answered. */
  default void decisionFailed(String kind, List<Rule> rules, Throwable error) {}

  /**
   * A refusal started a ban on {@code key}, the key text ({@link Rule#keyText}: the dimension
   * values without the rule name, as admin tools list and take keys); follows {@link #decision}.
   */
  default void banApplied(String kind, Decision decision, String key) {}

  /** A request skipped every rule because its client is on the policy's {@code allow} list. */
  default void allowlisted(String kind) {}

  /**
   * A request that {@code rule} refused waits for its token instead (the rule's {@code delay});
   * its final decision is reported by {@link #decision} when the wait ends.
   */
  default void delayed(String kind, String rule) {}

  /** The adapter answered by itself with {@code status} (429, 503, 413...). */
  default void generated(int status) {}

  /** A listener that ignores everything. */
  static DecisionListener none() {
    return new DecisionListener() {};
  }

  /** Tells each of {@code listeners}, in order; none, or the one, when there are 0 or 1. */
  static DecisionListener all(List<? extends DecisionListener> listeners) {
    DecisionListener[] each = listeners.toArray(new DecisionListener[0]);
    if (each.length < 2) {
      return each.length == 0 ? none() : each[0];
    }
    return new DecisionListener() {
      @Override
      public void decision(String kind, List<Rule> rules, Decision decision, long nanos) {
        for (DecisionListener l : each) {
          l.decision(kind, rules, decision, nanos);
        }
      }

      @Override
      public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
        for (DecisionListener l : each) {
          l.decisionFailed(kind, rules, error);
        }
      }

      @Override
      public void banApplied(String kind, Decision decision, String key) {
        for (DecisionListener l : each) {
          l.banApplied(kind, decision, key);
        }
      }

      @Override
      public void allowlisted(String kind) {
        for (DecisionListener l : each) {
          l.allowlisted(kind);
        }
      }

      @Override
      public void delayed(String kind, String rule) {
        for (DecisionListener l : each) {
          l.delayed(kind, rule);
        }
      }

      @Override
      public void generated(int status) {
        for (DecisionListener l : each) {
          l.generated(status);
        }
      }
    };
  }
}
