package dev.sluice.server.log;

import dev.sluice.server.Log;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** One SLF4J logger; each call reads the process's current {@link Log} and its level. */
final class Slf4jLogger extends LegacyAbstractLogger {

  private static final long serialVersionUID = 1L;

  Slf4jLogger(String name) {
    this.name = name;
  }

  @Override
  public boolean isTraceEnabled() {
    return Logging.enabled(name, Log.Level.TRACE);
  }

  @Override
  public boolean isDebugEnabled() {
    return Logging.enabled(name, Log.Level.DEBUG);
  }

  @Override
  public boolean isInfoEnabled() {
    return Logging.enabled(name, Log.Level.INFO);
  }

  @Override
  public boolean isWarnEnabled() {
    return Logging.enabled(name, Log.Level.WARN);
  }

  @Override
  public boolean isErrorEnabled() {
    return Logging.enabled(name, Log.Level.ERROR);
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern,
      Object[] args, Throwable error) {
    String message = args == null || args.length == 0 ? pattern
        : MessageFormatter.basicArrayFormat(pattern, args);
    Logging.write(name, level(level), message, error);
  }

  static Log.Level level(Level level) {
    return switch (level) {
      case ERROR -> Log.Level.ERROR;
      case WARN -> Log.Level.WARN;
      case INFO -> Log.Level.INFO;
      case DEBUG -> Log.Level.DEBUG;
      case TRACE -> Log.Level.TRACE;
    };
  }
}
