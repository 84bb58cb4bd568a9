package dev.sluice.server.log;

import dev.sluice.server.Log;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * Routes every logger of the process into one {@link Log}: SLF4J 2 (Netty, Lettuce, Micrometer)
 * through {@link Slf4jProvider}, java.util.logging and {@code System.Logger} (gRPC, the Redis
 * store, the JDK) through {@link JulHandler}. A third-party line keeps its logger's name as the
 * field {@code logger}.
 */
public final class Logging {

  private static final Map<String, Log.Level> FLOORS = new ConcurrentHashMap<>();

  private Logging() {}

  /** Makes {@code log} the process's log, for Sluice's lines and every library's. */
  public static void setUp(Log log) {
    Log.install(log);
    LogManager.getLogManager().reset();
    Logger root = Logger.getLogger("");
    root.addHandler(new JulHandler());
    root.setLevel(JulHandler.julLevel(log.level()));
  }

  /**
   * Shows only {@code min} and above from the third-party logger named {@code logger} (one that
   * repeats itself while Sluice reports the same thing once).
   */
  public static void quiet(String logger, Log.Level min) {
    FLOORS.put(logger, min);
  }

  /** Whether a third-party line of {@code logger} at {@code level} is written. */
  static boolean enabled(String logger, Log.Level level) {
    Log.Level floor = FLOORS.get(logger);
    return (floor == null || level.compareTo(floor) >= 0) && Log.process().enabled(level);
  }

  /** Writes a third-party line. */
  static void write(String logger, Log.Level level, String message, Throwable error) {
    if (!enabled(logger, level)) {
      return;
    }
    String text = message == null ? "" : message;
    if (error == null) {
      Log.process().log(level, text, "logger", logger);
    } else {
      Log.process().log(level, text, "logger", logger, "error", error);
    }
  }
}
