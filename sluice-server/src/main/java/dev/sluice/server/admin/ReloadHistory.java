package dev.sluice.server.admin;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The policy's loads and reloads with their results, the last {@value #MAX}, for the console:
 * when, why (start, file changed, SIGHUP, request), the result ({@code ok}, {@code rejected},
 * {@code unchanged}) and the summary of the policy installed or the first errors of the one
 * rejected.
 */
public final class ReloadHistory {

  static final int MAX = 100;
  /** Errors kept per rejected reload; the log has every one. */
  static final int MAX_ERRORS = 10;

  private final RecentEntries entries = new RecentEntries(MAX);

  /** A policy installed: at start ({@code cause} "start") or by a reload. */
  public void installed(Instant at, String cause, String source, String summary) {
    Map<String, Object> e = entry(at, cause, "ok", source);
    e.put("summary", summary);
    entries.add(e);
  }

  /** A reload that found nothing to install (no file: the embedded default). */
  public void unchanged(Instant at, String cause, String why) {
    Map<String, Object> e = entry(at, cause, "unchanged", null);
    e.put("summary", why);
    entries.add(e);
  }

  /** A policy rejected with {@code errors}; the previous one keeps serving. */
  public void rejected(Instant at, String cause, String source, List<String> errors) {
    Map<String, Object> e = entry(at, cause, "rejected", source);
    e.put("errorCount", errors.size());
    e.put("errors", List.copyOf(errors.subList(0, Math.min(MAX_ERRORS, errors.size()))));
    entries.add(e);
  }

  private static Map<String, Object> entry(Instant at, String cause, String result,
      String source) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("at", at.toString());
    e.put("cause", cause);
    e.put("result", result);
    if (source != null) {
      e.put("source", source);
    }
    return e;
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
