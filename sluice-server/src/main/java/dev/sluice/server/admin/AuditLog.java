package dev.sluice.server.admin;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The admin actions (unban, reset), each written to the log, as before, and kept here, the last
 * {@value #MAX}, for the console's audit table: who (the peer, the token's id or
 * {@code anonymous}, the actor the client named), what (action, rule, key, outcome, status) and
 * when. A bounded buffer of small entries: at most {@value #MAX} x a few hundred bytes.
 */
public final class AuditLog implements Incidents.ActionLog {

  static final int MAX = 1000;
  /** The longest field value kept (a key is at most about 8 KB). */
  private static final int MAX_VALUE = 512;

  private final Incidents.ActionLog log;
  private final Supplier<Instant> clock;
  private final RecentEntries entries = new RecentEntries(MAX);

  /** Writes each action to {@code log} too; {@code clock} stamps the entries. */
  public AuditLog(Incidents.ActionLog log, Supplier<Instant> clock) {
    this.log = log;
    this.clock = clock;
  }

  @Override
  public void action(String message, Object... fields) {
    log.action(message, fields);
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("at", clock.get().toString());
    e.put("action", message.startsWith("admin ") ? message.substring(6) : message);
    for (int i = 0; i + 1 < fields.length; i += 2) {
      String v = String.valueOf(fields[i + 1]);
      e.put(String.valueOf(fields[i]), fields[i + 1] instanceof Number ? fields[i + 1]
          : v.length() > MAX_VALUE ? v.substring(0, MAX_VALUE) + "..." : v);
    }
    entries.add(e);
  }

  /** The last {@code n} entries, newest first. */
  List<Map<String, Object>> recent(int n) {
    return entries.recent(n);
  }

  /** How many were recorded since start: a page refetches when it changes. */
  long seq() {
    return entries.seq();
  }
}
