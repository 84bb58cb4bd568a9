package dev.sluice.server;

import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * One-line logs on stderr: {@code 2025-06-01T12:00:00.123Z INFO  message key=value ...}. Values
 * with spaces or quotes are quoted, so a line splits on spaces into fields; client-chosen text
 * (a key built from a header) can therefore not forge a field or a line. A {@link Throwable}
 * field is followed by its stack trace on tab-indented lines.
 */
public final class Log {

  private final PrintStream out;

  public Log(PrintStream out) {
    this.out = out;
  }

  public void info(String message, Object... fields) {
    write("INFO ", message, fields);
  }

  public void warn(String message, Object... fields) {
    write("WARN ", message, fields);
  }

  public void error(String message, Object... fields) {
    write("ERROR", message, fields);
  }

  private void write(String level, String message, Object... fields) {
    StringBuilder sb = new StringBuilder(96);
    sb.append(Instant.now().truncatedTo(ChronoUnit.MILLIS)).append(' ').append(level).append(' ')
        .append(message.replace('\n', ' ').replace('\r', ' '));
    Throwable error = null;
    for (int i = 0; i + 1 < fields.length; i += 2) {
      sb.append(' ').append(fields[i]).append('=').append(value(String.valueOf(fields[i + 1])));
      if (fields[i + 1] instanceof Throwable t) {
        error = t;
      }
    }
    if (error != null) {
      // The trace follows on indented lines, so the line itself still splits into fields.
      java.io.StringWriter trace = new java.io.StringWriter();
      error.printStackTrace(new java.io.PrintWriter(trace));
      String text = trace.toString().strip();
      int firstBreak = text.indexOf('\n');
      if (firstBreak > 0) {
        sb.append(System.lineSeparator()).append(text.substring(firstBreak + 1).stripTrailing());
      }
    }
    synchronized (out) {
      out.println(sb);
      out.flush();
    }
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
