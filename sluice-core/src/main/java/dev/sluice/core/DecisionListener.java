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

  /** A refusal started a ban on store key {@code key}; follows {@link #decision}. */
  default void banApplied(String kind, Decision decision, String key) {}

  /** The adapter answered by itself with {@code status} (429, 503). */
  default void generated(int status) {}

  /** A listener that ignores everything. */
  static DecisionListener none() {
    return new DecisionListener() {};
  }
}
