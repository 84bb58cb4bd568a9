package dev.sluice.server.replay;

import dev.sluice.core.Identity;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Check;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Concurrency rules (nginx's {@code limit_conn}) on a log that says how long each request took:
 * a request admitted at {@code t} holds a lease of each of its route's concurrency rules until
 * {@code t + duration}, as the gateway's lease lasts until the response's last byte. A request
 * finding {@code max} leases held for its key is refused by that rule, and then takes nothing.
 *
 * <p>Memory: one queue of end times per key with a lease in force; keys whose leases have all
 * ended are swept whenever the table has doubled since the last sweep.
 */
final class ReplayLeases {

  private record Key(Rule rule, List<String> values) {}

  /** The rule's own key: the values of its dimensions (a missing one is its shared bucket). */
  private static Key key(Rule rule, Identity identity) {
    List<String> values = new ArrayList<>(rule.dimensions().size());
    for (String d : rule.dimensions()) {
      values.add(identity.has(d) ? identity.get(d) : null);
    }
    return new Key(rule, values);
  }

  private final Map<Key, PriorityQueue<Long>> held = new HashMap<>();
  private int sweepAt = 1024;

  /** The first enforcing concurrency rule of {@code check} that is full at {@code now}. */
  Rule refusing(Check check, long now) {
    List<Rule> leases = check.leases();
    for (int i = 0; i < leases.size(); i++) {
      Rule rule = leases.get(i);
      if (rule.mode() != Mode.ENFORCE) {
        continue;
      }
      PriorityQueue<Long> q = held.get(key(rule, check.identity()));
      if (q == null) {
        continue;
      }
      while (!q.isEmpty() && q.peek() <= now) {
        q.poll();
      }
      if (q.size() >= rule.concurrency()) {
        return rule;
      }
    }
    return null;
  }

  /** Holds a lease of each concurrency rule of {@code check} from now until {@code end}. */
  void take(Check check, long now, long end) {
    List<Rule> leases = check.leases();
    for (int i = 0; i < leases.size(); i++) {
      Rule rule = leases.get(i);
      if (rule.mode() == Mode.OFF) {
        continue;
      }
      held.computeIfAbsent(key(rule, check.identity()), k -> new PriorityQueue<>())
          .add(end);
    }
    if (held.size() >= sweepAt) {
      sweep(now);
      sweepAt = Math.max(1024, held.size() * 2);
    }
  }

  private void sweep(long now) {
    List<Key> ended = new ArrayList<>();
    for (Iterator<Map.Entry<Key, PriorityQueue<Long>>> it = held.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<Key, PriorityQueue<Long>> e = it.next();
      PriorityQueue<Long> q = e.getValue();
      while (!q.isEmpty() && q.peek() <= now) {
        q.poll();
      }
      if (q.isEmpty()) {
        ended.add(e.getKey());
      }
    }
    ended.forEach(held::remove);
  }
}
