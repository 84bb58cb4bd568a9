package dev.sluice.server;

import dev.sluice.core.Secrets;
import dev.sluice.core.http.Json;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.util.Locale;

/**
 * The process's log, one event a line on stderr, for Sluice's own lines and, through the SLF4J
 * provider and the java.util.logging handler of {@code dev.sluice.server.log}, for Netty's,
 * Lettuce's and gRPC's: one format and one level vocabulary (TRACE, DEBUG, INFO, WARN, ERROR).
 *
 * <p>Text: {@code 2025-06-01T12:00:00.123Z INFO  message key=value ...}. Values with spaces or
 * quotes are quoted, so a line splits on spaces into fields; client-chosen text (a key built
 * from a header) can therefore not forge a field or a line. A {@link Throwable} field is
 * followed by its stack trace on tab-indented lines.
 *
 * <p>JSON: one object a line, {@code {"ts":"...","level":"INFO","msg":"...","key":"value"}}; a
 * {@link Throwable} field adds {@code "trace"}.
 *
 * <p>Every line passes {@link Secrets#mask}: no URI password reaches the log.
 */
public final class Log {

  /** Severity, lowest first. */
  public enum Level {
    TRACE, DEBUG, INFO, WARN, ERROR;

    /** {@code error}, {@code warn}, {@code info}, {@code debug}, {@code trace}, any case. */
    public static Level parse(String text) {
      for (Level l : values()) {
        if (l.name().equalsIgnoreCase(text == null ? "" : text.trim())) {
          return l;
        }
      }
      throw new IllegalArgumentException("\"" + text + "\" (expected: error, warn, info, debug "
          + "or trace)");
    }
  }

  /** The line format. */
  public enum Format {
    TEXT, JSON;

    /** {@code text} or {@code json}, any case. */
    public static Format parse(String text) {
      for (Format f : values()) {
        if (f.name().equalsIgnoreCase(text == null ? "" : text.trim())) {
          return f;
        }
      }
      throw new IllegalArgumentException("\"" + text + "\" (expected: text or json)");
    }
  }

  private static volatile Log process = new Log(System.err);

  private final PrintStream out;
  private final Level min;
  private final Format format;
  private final Clock clock;

  /** INFO and above, as text. */
  public Log(PrintStream out) {
    this(out, Level.INFO, Format.TEXT);
  }

  public Log(PrintStream out, Level min, Format format) {
    this(out, min, format, Clock.systemUTC());
  }

  Log(PrintStream out, Level min, Format format, Clock clock) {
    this.out = out;
    this.min = min;
    this.format = format;
    this.clock = clock;
  }

  /** The log third-party libraries write to (stderr at INFO until {@link #install}). */
  public static Log process() {
    return process;
  }

  /** Makes {@code log} the one third-party libraries write to; returns it. */
  public static Log install(Log log) {
    process = log;
    return log;
  }

  public Level level() {
    return min;
  }

  public boolean enabled(Level level) {
    return level.compareTo(min) >= 0;
  }

  public void debug(String message, Object... fields) {
    log(Level.DEBUG, message, fields);
  }

  public void info(String message, Object... fields) {
    log(Level.INFO, message, fields);
  }

  public void warn(String message, Object... fields) {
    log(Level.WARN, message, fields);
  }

  public void error(String message, Object... fields) {
    log(Level.ERROR, message, fields);
  }

  /** One line at {@code level}: {@code fields} are name, value pairs. */
  public void log(Level level, String message, Object... fields) {
    if (!enabled(level)) {
      return;
    }
    String line = format == Format.JSON ? json(level, message, fields) : text(level, message, fields);
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }

  private String text(Level level, String message, Object[] fields) {
    StringBuilder sb = new StringBuilder(96);
    sb.append(Instant.ofEpochMilli(clock.millis())).append(' ')
        .append(String.format(Locale.ROOT, "%-5s", level)).append(' ')
        .append(Secrets.mask(message).replace('\n', ' ').replace('\r', ' '));
    Throwable error = null;
    for (int i = 0; i + 1 < fields.length; i += 2) {
      sb.append(' ').append(fields[i]).append('=')
          .append(value(Secrets.mask(String.valueOf(fields[i + 1]))));
      if (fields[i + 1] instanceof Throwable t) {
        error = t;
      }
    }
    if (error != null) {
      // The trace follows on indented lines, so the line itself still splits into fields.
      // Every line of it starts with a tab, "Caused by:" too, so a reader can tell events apart.
      trace(error).lines().skip(1).forEach(l -> sb.append(System.lineSeparator())
          .append(l.startsWith("\t") ? "" : "\t").append(l));
    }
    return sb.toString();
  }

  private String json(Level level, String message, Object[] fields) {
    StringBuilder sb = new StringBuilder(128).append("{\"ts\":\"")
        .append(Instant.ofEpochMilli(clock.millis())).append("\",\"level\":\"").append(level)
        .append("\",\"msg\":");
    Json.quote(sb, Secrets.mask(message), false);
    Throwable error = null;
    for (int i = 0; i + 1 < fields.length; i += 2) {
      sb.append(',');
      Json.quote(sb, String.valueOf(fields[i]), false).append(':');
      Object v = fields[i + 1];
      if (v instanceof Long || v instanceof Integer || v instanceof Boolean) {
        sb.append(v);
      } else if (v instanceof Double || v instanceof Float) {
        sb.append(Json.number(((Number) v).doubleValue()));
      } else {
        Json.quote(sb, Secrets.mask(String.valueOf(v)), false);
      }
      if (v instanceof Throwable t) {
        error = t;
      }
    }
    if (error != null) {
      sb.append(",\"trace\":");
      Json.quote(sb, trace(error), false);
    }
    return sb.append('}').toString();
  }

  private static String trace(Throwable error) {
    StringWriter trace = new StringWriter();
    error.printStackTrace(new PrintWriter(trace));
    return Secrets.mask(trace.toString().strip());
  }

  static String value(String v) {
    boolean plain = !v.isEmpty();
    for (int i = 0; i < v.length() && plain; i++) {
      char c = v.charAt(i);
      plain = c > ' ' && c < 0x7f && c != '"' && c != '=' && c != '\\';
    }
    if (plain) {
      return v;
    }
    StringBuilder sb = new StringBuilder(v.length() + 2).append('"');
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < ' ' || c == 0x7f) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
