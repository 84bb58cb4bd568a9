package dev.sluice.core;

import java.util.List;

/**
 * What an adapter reports about its decisions, for metrics and logs: the one listener of the
 * admission step ({@link dev.sluice.core.policy.Admission}), which every adapter calls, so the
 * gateway, the Netty handlers, the servlet filter and the Spring starter report alike;
 * {@code sluice-micrometer}'s binder implements it. Called on request threads and I/O threads:
 * implementations must not block. Every method does nothing by default.
 *
 * <p>A {@link Decision} passed in may be a {@link MutableDecision} that the next request's
 * decision overwrites (the relay's allocation-free path): read its values during the call, and
 * keep those, or {@link MutableDecision#snapshot()}, never the decision itself.
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
   * the decision took {@code nanos} from asking the store to the answer (-1 when not measured: a
   * local store's decision takes less than timing it would).
   */
  default void decision(String kind, List<Rule> rules, Decision decision, long nanos) {}

  /** Checking {@code rules} threw: a bug, never a limit; each rule's onStoreError answered. */
  default void decisionFailed(String kind, List<Rule> rules, Throwable error) {}

  /**
   * A refusal started a ban on {@code key}, the key text ({@link Rule#keyText}: the dimension
   * values without the rule name, as admin tools list and take keys); follows {@link #decision}.
   */
  default void banApplied(String kind, Decision decision, String key) {}

  /**
   * Shadow rule {@code rule} would have refused {@code key} (its key text, as the admin API
   * takes it): a dry run's refusal; follows {@link #decision}.
   */
  default void shadowRefused(String kind, Rule rule, String key) {}

  /** A request skipped every rule because its client is on the policy's {@code allow} list. */
  default void allowlisted(String kind) {}

  /**
   * A request that {@code rule} refused waits for its token instead (the rule's {@code delay});
   * its final decision is reported by {@link #decision} when the wait ends.
   */
  default void delayed(String kind, String rule) {}

  /** The adapter answered by itself with {@code status} (429, 503, 413...). */
  default void generated(int status) {}

  /** A request's client is on the policy's {@code deny} list: answered 403, never forwarded. */
  default void denied(String kind) {}

  /**
   * Human check {@code check} ended in {@code result}: {@code passed}, {@code failed}, {@code
   * replayed} (a token seen before), {@code missing} (no token), {@code error} (the verifier or
   * the store could not answer; {@code detail} says what happened, for the log).
   */
  default void humanCheck(String check, String result, String detail) {}

  /**
   * A response of {@code status} reached a rule counted on responses: {@code counted} (it spent),
   * {@code skipped} (not a status it counts), {@code reset} (a cooldown's success).
   */
  default void responseCounted(String rule, int status, String result) {}

  /** A concurrency rule's lease was taken ({@code +1}) or given back ({@code -1}). */
  default void inFlight(String rule, int delta) {}
  /**
   * A challenge step of {@code rule} (a rule whose action is {@code challenge}): {@code issued}
   * (a puzzle page), {@code solved}, {@code failed} (a wrong answer), {@code replayed} (an
   * answer whose nonce was spent), {@code refused} (the challenge's own limit per client) or
   * {@code cleared} (a clearance cookie let the request past the rule).
   */
  default void challenge(String rule, String step) {}

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
      public void shadowRefused(String kind, Rule rule, String key) {
        for (DecisionListener l : each) {
          l.shadowRefused(kind, rule, key);
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

      @Override
      public void denied(String kind) {
        for (DecisionListener l : each) {
          l.denied(kind);
        }
      }

      @Override
      public void humanCheck(String check, String result, String detail) {
        for (DecisionListener l : each) {
          l.humanCheck(check, result, detail);
        }
      }

      @Override
      public void responseCounted(String rule, int status, String result) {
        for (DecisionListener l : each) {
          l.responseCounted(rule, status, result);
        }
      }

      @Override
      public void inFlight(String rule, int delta) {
        for (DecisionListener l : each) {
          l.inFlight(rule, delta);
        }
      }

      @Override
      public void challenge(String rule, String step) {
        for (DecisionListener l : each) {
          l.challenge(rule, step);
        }
      }
    };
  }
}
