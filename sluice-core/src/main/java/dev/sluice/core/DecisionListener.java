package dev.sluice.core;

import java.util.List;

/**
 * What an adapter reports about its decisions, for metrics and logs; the servlet filter calls it
 * and {@code sluice-micrometer}'s binder implements it, so neither depends on the other. Called
 * on request threads: implementations must not block.
 */
public interface DecisionListener {

  /** An HTTP request's decision. */
  String HTTP = "http";

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

  /** The adapter answered by itself with {@code status} (429, 503). */
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
      public void generated(int status) {
        for (DecisionListener l : each) {
          l.generated(status);
        }
      }
    };
  }
}
