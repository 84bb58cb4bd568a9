package dev.sluice.server.log;

import dev.sluice.server.Log;
import java.text.MessageFormat;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * java.util.logging (and {@code System.Logger}, which the JDK sends there) into the process's
 * {@link Log}: SEVERE is ERROR, WARNING is WARN, INFO is INFO, CONFIG and FINE are DEBUG, finer
 * is TRACE, so no line says WARNING or SEVERE.
 */
final class JulHandler extends Handler {

  @Override
  public void publish(LogRecord record) {
    if (record == null) {
      return;
    }
    String name = record.getLoggerName() == null ? "" : record.getLoggerName();
    Log.Level level = level(record.getLevel());
    if (!Logging.enabled(name, level)) {
      return;
    }
    Logging.write(name, level, message(record), record.getThrown());
  }

  private static String message(LogRecord record) {
    String m = record.getMessage();
    Object[] params = record.getParameters();
    if (m == null || params == null || params.length == 0 || !m.contains("{")) {
      return m;
    }
    try {
      return MessageFormat.format(m, params);
    } catch (IllegalArgumentException e) {
      return m;
    }
  }

  static Log.Level level(Level level) {
    int v = level.intValue();
    if (v >= Level.SEVERE.intValue()) {
      return Log.Level.ERROR;
    }
    if (v >= Level.WARNING.intValue()) {
      return Log.Level.WARN;
    }
    if (v >= Level.INFO.intValue()) {
      return Log.Level.INFO;
    }
    if (v >= Level.FINE.intValue()) {
      return Log.Level.DEBUG;
    }
    return Log.Level.TRACE;
  }

  static Level julLevel(Log.Level level) {
    return switch (level) {
      case ERROR -> Level.SEVERE;
      case WARN -> Level.WARNING;
      case INFO -> Level.INFO;
      case DEBUG -> Level.FINE;
      case TRACE -> Level.ALL;
    };
  }

  @Override
  public void flush() {}

  @Override
  public void close() {}
}
