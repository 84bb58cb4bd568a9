package dev.sluice.spring;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bans this application's filter started that are still running, for the {@code sluice}
 * endpoint. The store cannot list bans (in Redis each is a key with a TTL among millions), so
 * this is what this instance saw start: another instance's bans on a shared store are not here.
 * Bounded: the latest {@value #MAX} bans; expired ones leave when the list is read or full.
 */
final class ActiveBans implements DecisionListener {

  static final int MAX = 1000;

  /**
   * A running ban: the rule that started it, its key text ({@link dev.sluice.core.Rule#keyText}:
   * what the log prints and the admin API takes, without the rule name) and when it ends.
   */
  record Ban(String rule, String key, Instant until) {}

  private final Clock clock;
  private final LinkedHashMap<String, Ban> bans = new LinkedHashMap<>();

  ActiveBans(Clock clock) {
    this.clock = clock;
  }

  @Override
  public void banApplied(String kind, Decision decision, String key) {
    if (key == null || decision.rule() == null) {
      return;
    }
    Instant now = clock.instant();
    Ban ban = new Ban(decision.rule(), key, now.plusNanos(decision.retryAfterNanos()));
    // One key text may be banned under two rules: the rule is part of the identity of a ban.
    String id = decision.rule() + '\n' + key;
    synchronized (bans) {
      bans.remove(id);   // re-inserted last: the map stays in order of start
      bans.put(id, ban);
      if (bans.size() > MAX) {
        dropExpired(now);
        Iterator<Map.Entry<String, Ban>> oldest = bans.entrySet().iterator();
        while (bans.size() > MAX) {
          oldest.next();
          oldest.remove();
        }
      }
    }
  }

  /** The running bans, oldest first. */
  List<Ban> active() {
    synchronized (bans) {
      dropExpired(clock.instant());
      return new ArrayList<>(bans.values());
    }
  }

  private void dropExpired(Instant now) {
    bans.values().removeIf(b -> !b.until().isAfter(now));
  }
}
