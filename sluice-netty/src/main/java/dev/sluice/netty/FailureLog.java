package dev.sluice.netty;

import dev.sluice.core.Rule;
import dev.sluice.core.Ticker;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * Logs failed decisions (bugs, not limits) with their stack trace, at most once per rule per
 * minute: a broken rule fails every request it sees, and a trace per request would bury
 * everything else in the log.
 */
final class FailureLog {

  static final long EVERY_NANOS = 60_000_000_000L;
  private static final int MAX_RULES = 1024;
  private static final System.Logger LOG = System.getLogger(HttpRateLimitHandler.class.getName());

  static final FailureLog SHARED = new FailureLog(Ticker.system(),
      (message, error) -> LOG.log(System.Logger.Level.ERROR, message, error));

  private final Ticker ticker;
  private final BiConsumer<String, Throwable> sink;
  private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

  FailureLog(Ticker ticker, BiConsumer<String, Throwable> sink) {
    this.ticker = ticker;
    this.sink = sink;
  }

  void failed(String kind, List<Rule> rules, Throwable error) {
    List<String> names = names(rules);
    if (due(names)) {
      sink.accept("rate limit decision failed (a bug; each rule's onStoreError decided) kind="
          + kind + " rules=" + names, error);
    }
  }

  /** True when no rule of {@code rules} was logged within the last minute; marks them logged. */
  private boolean due(List<String> rules) {
    long now = ticker.read();
    boolean due = false;
    if (lastLogged.size() > MAX_RULES) {
      lastLogged.clear();
    }
    for (String rule : rules.isEmpty() ? List.of("") : rules) {
      Long last = lastLogged.get(rule);
      if (last == null || now - last >= EVERY_NANOS) {
        lastLogged.put(rule, now);
        due = true;
      }
    }
    return due;
  }

  static List<String> names(List<Rule> rules) {
    return rules.stream().map(Rule::name).toList();
  }
}
