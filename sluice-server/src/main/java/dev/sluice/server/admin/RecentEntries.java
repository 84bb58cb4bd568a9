package dev.sluice.server.admin;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The last {@code max} entries of a console table (the audit log, the reload history), each
 * numbered as it comes ({@code seq}), so that a page refetches when the number changes.
 * Thread-safe.
 */
final class RecentEntries {

  private final int max;
  private final ArrayDeque<Map<String, Object>> entries = new ArrayDeque<>();
  private long seq;

  RecentEntries(int max) {
    this.max = max;
  }

  /** Numbers {@code e} (its {@code seq} field) and keeps it, dropping the oldest past the cap. */
  synchronized void add(Map<String, Object> e) {
    e.put("seq", ++seq);
    entries.addLast(e);
    if (entries.size() > max) {
      entries.removeFirst();
    }
  }

  /** The last {@code n} entries, newest first. */
  synchronized List<Map<String, Object>> recent(int n) {
    List<Map<String, Object>> out = new ArrayList<>(Math.min(n, entries.size()));
    Iterator<Map<String, Object>> it = entries.descendingIterator();
    while (it.hasNext() && out.size() < n) {
      out.add(it.next());
    }
    return out;
  }

  /** How many entries were added since start. */
  synchronized long seq() {
    return seq;
  }
}
