package dev.sluice.server.replay;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** Builds access logs line by line for tests: requests at exact times, written in order. */
final class Logs {

  /** 2025-06-01T12:00:00Z, a multiple of every window the tests use. */
  static final long T0 = Instant.parse("2025-06-01T12:00:00Z").toEpochMilli() * 1000;

  /** nginx's combined plus X-Forwarded-For, with $msec for sub-second times. */
  static final String MSEC_FORMAT = "nginx:$remote_addr - $remote_user [$msec] \"$request\" "
      + "$status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" "
      + "\"$http_x_forwarded_for\"";

  private static final DateTimeFormatter CLF =
      DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ROOT).withZone(ZoneOffset.UTC);

  record Line(long micros, String addr, String method, String path, String agent, String xff) {}

  final List<Line> lines = new ArrayList<>();

  /** A request {@code offsetMicros} after {@link #T0}. */
  Logs add(long offsetMicros, String addr, String path, String agent, String xff) {
    lines.add(new Line(T0 + offsetMicros, addr, "GET", path, agent, xff));
    return this;
  }

  List<Line> sorted() {
    List<Line> s = new ArrayList<>(lines);
    s.sort(Comparator.comparingLong(Line::micros));
    return s;
  }

  /** In {@link #MSEC_FORMAT}. */
  String msec() {
    StringBuilder sb = new StringBuilder();
    for (Line l : sorted()) {
      sb.append(l.addr()).append(" - - [").append(l.micros() / 1_000_000).append('.')
          .append(String.format(Locale.ROOT, "%06d", l.micros() % 1_000_000)).append("] \"")
          .append(l.method()).append(' ').append(l.path()).append(" HTTP/1.1\" 200 12 \"-\" \"")
          .append(l.agent() == null ? "-" : l.agent()).append("\" \"")
          .append(l.xff() == null ? "-" : l.xff()).append("\"\n");
    }
    return sb.toString();
  }

  /** nginx's combined (whole seconds). */
  String combined() {
    StringBuilder sb = new StringBuilder();
    for (Line l : sorted()) {
      sb.append(l.addr()).append(" - - [").append(CLF.format(Instant.ofEpochMilli(
          l.micros() / 1000))).append("] \"").append(l.method()).append(' ').append(l.path())
          .append(" HTTP/1.1\" 200 12 \"-\" \"").append(l.agent() == null ? "-" : l.agent())
          .append("\"\n");
    }
    return sb.toString();
  }

  static Path write(Path dir, String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text, StandardCharsets.UTF_8);
    return p;
  }
}
