package dev.sluice.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Every log line of the JVM (the store's System.Logger and Lettuce's Netty logger both end in
 * java.util.logging here) while open, as "LEVEL logger: message".
 */
final class LogCapture extends Handler implements AutoCloseable {

  private final SimpleFormatter formatter = new SimpleFormatter();
  private final List<String> lines = new ArrayList<>();

  LogCapture() {
    setLevel(Level.ALL);
    Logger.getLogger("").addHandler(this);
  }

  @Override
  public synchronized void publish(LogRecord r) {
    lines.add(r.getLevel() + " " + r.getLoggerName() + ": " + formatter.formatMessage(r));
  }

  synchronized List<String> lines() {
    return new ArrayList<>(lines);
  }

  /** Lines at WARNING or above. */
  synchronized List<String> warnings() {
    return lines.stream().filter(l -> l.startsWith("WARNING") || l.startsWith("SEVERE")).toList();
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    Logger.getLogger("").removeHandler(this);
  }
}
