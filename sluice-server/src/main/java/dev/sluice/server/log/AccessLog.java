package dev.sluice.server.log;

import dev.sluice.core.Secrets;
import dev.sluice.core.http.Json;
import dev.sluice.gateway.AccessEntry;
import dev.sluice.policy.LoggingSettings;
import dev.sluice.server.Log;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The gateway's access log: one line a finished exchange, in the format and to the file the
 * policy's {@code logging:} section names (read from each entry, so a reload switches both).
 *
 * <p>I/O threads only {@link #accept offer} an entry to a bounded queue; one writer thread
 * formats and writes. A slow disk therefore never holds an I/O thread: when the queue is full the
 * entry is dropped and counted ({@link #dropped()}, the metric
 * {@code sluice_access_log_dropped_total}), as is every entry that cannot be written (a file
 * that cannot be opened is reported once, at ERROR, until it opens again).
 *
 * <p>{@code common}: the Common Log Format's fields, then Sluice's:
 * {@code 203.0.113.7 - - [01/Jun/2025:12:00:00 +0000] "GET /api/x HTTP/1.1" 429 52 route=api
 * rule=api outcome=refused upstream_ms=-}; {@code combined} adds {@code "referer" "user agent"}
 * after the bytes, as nginx's and Apache's {@code combined} do, so their parsers read it.
 * {@code json}: one object a line with {@code ts}, {@code client}, {@code method}, {@code path},
 * {@code status}, {@code bytes}, {@code route}, {@code rule}, {@code outcome},
 * {@code upstream_ms}, then what {@code sluice replay} reads to decide again: {@code start} (the
 * request's arrival, with microseconds), {@code protocol}, {@code peer}, {@code host},
 * {@code referer}, {@code user_agent}, {@code websocket}, and the forwarding headers
 * ({@code x_forwarded_for}, {@code forwarded}, {@code x_real_ip}) when a proxy is trusted.
 */
public final class AccessLog implements Consumer<AccessEntry>, AutoCloseable {

  /** Entries waiting for the writer; past this, entries are dropped and counted. */
  public static final int DEFAULT_QUEUE = 8192;

  private static final DateTimeFormatter CLF =
      DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ROOT).withZone(ZoneOffset.UTC);
  private static final AccessEntry STOP = new AccessEntry(0, "", "", "", 0, 0, null, null, "",
      -1, LoggingSettings.defaults());

  private final BlockingQueue<AccessEntry> queue;
  private final PrintStream stdout;
  private final AtomicLong dropped = new AtomicLong();
  private final Thread writer;
  private Path openPath;
  private Writer open;
  private boolean failing;

  /** A log whose {@code -} is {@code stdout}, with room for {@code capacity} waiting entries. */
  public AccessLog(PrintStream stdout, int capacity) {
    this.stdout = Objects.requireNonNull(stdout, "stdout");
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.writer = new Thread(this::drain, "sluice-access-log");
    writer.setDaemon(true);
    writer.start();
  }

  /** Queues {@code entry} without waiting: dropped and counted when the queue is full. */
  @Override
  public void accept(AccessEntry entry) {
    if (!queue.offer(entry)) {
      dropped.incrementAndGet();
    }
  }

  /** Entries dropped so far: a full queue, or a file that could not be written. */
  public long dropped() {
    return dropped.get();
  }

  /** Writes what is queued, then stops the writer (waiting for it at most 5 s). */
  @Override
  public void close() {
    try {
      queue.put(STOP);
      writer.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void drain() {
    List<AccessEntry> batch = new ArrayList<>(256);
    try {
      while (true) {
        batch.add(queue.take());
        queue.drainTo(batch, 255);
        for (AccessEntry e : batch) {
          if (e == STOP) {
            flush();
            closeFile();
            return;
          }
          write(e);
        }
        batch.clear();
        // Flushed when the queue is empty: lines reach the file within one batch.
        flush();
      }
    } catch (InterruptedException e) {
      flush();
      closeFile();
    }
  }

  private void write(AccessEntry e) {
    LoggingSettings s = e.settings();
    String line = Secrets.mask(s.access() == LoggingSettings.Access.JSON ? json(e)
        : s.access() == LoggingSettings.Access.COMBINED ? combined(e) : common(e));
    if (s.accessFile() == null) {
      closeFile();
      stdout.println(line);
      return;
    }
    try {
      if (!s.accessFile().equals(openPath)) {
        closeFile();
        Path parent = s.accessFile().toAbsolutePath().getParent();
        if (parent != null) {
          Files.createDirectories(parent);
        }
        open = new BufferedWriter(new OutputStreamWriter(Files.newOutputStream(s.accessFile(),
            StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE),
            StandardCharsets.UTF_8));
        openPath = s.accessFile();
      }
      open.write(line);
      open.write('\n');
      if (failing) {
        failing = false;
        Log.process().info("access log writing again", "file", s.accessFile());
      }
    } catch (IOException | RuntimeException ex) {
      dropped.incrementAndGet();
      closeFile();
      if (!failing) {
        failing = true;
        Log.process().error("access log cannot write; lines are dropped and counted "
            + "(sluice_access_log_dropped_total)", "file", s.accessFile(), "error",
            ex.toString());
      }
    }
  }

  private void flush() {
    stdout.flush();
    if (open != null) {
      try {
        open.flush();
      } catch (IOException e) {
        closeFile();
      }
    }
  }

  private void closeFile() {
    if (open != null) {
      try {
        open.close();
      } catch (IOException e) {
        // nothing more to write to it
      }
      open = null;
      openPath = null;
    }
  }

  static String common(AccessEntry e) {
    return clf(e, false);
  }

  static String combined(AccessEntry e) {
    return clf(e, true);
  }

  /** CLF's request field is the request line: {@code "METHOD TARGET PROTOCOL"}. */
  private static String clf(AccessEntry e, boolean combined) {
    StringBuilder sb = new StringBuilder(combined ? 240 : 160).append(plain(e.client()))
        .append(" - - [").append(CLF.format(Instant.ofEpochMilli(e.epochMillis()))).append("] \"")
        .append(plain(e.method())).append(' ').append(quoted(e.path())).append(' ')
        .append(e.protocol() == null ? "HTTP/1.1" : plain(e.protocol())).append("\" ")
        .append(e.status()).append(' ').append(e.bytes());
    if (combined) {
      sb.append(" \"").append(e.referer() == null ? "-" : quoted(e.referer())).append("\" \"")
          .append(e.userAgent() == null ? "-" : quoted(e.userAgent())).append('"');
    }
    sb.append(" route=").append(plain(e.route())).append(" rule=").append(plain(e.rule()))
        .append(" outcome=").append(e.outcome()).append(" upstream_ms=");
    if (e.upstreamMicros() < 0) {
      sb.append('-');
    } else {
      sb.append(String.format(Locale.ROOT, "%.3f", e.upstreamMicros() / 1000.0));
    }
    return sb.toString();
  }

  static String json(AccessEntry e) {
    StringBuilder sb = new StringBuilder(200).append("{\"ts\":\"")
        .append(Instant.ofEpochMilli(e.epochMillis())).append("\",\"client\":");
    Json.quote(sb, e.client(), false).append(",\"method\":");
    Json.quote(sb, e.method(), false).append(",\"path\":");
    Json.quote(sb, e.path(), false).append(",\"status\":").append(e.status())
        .append(",\"bytes\":").append(e.bytes()).append(",\"route\":");
    nullable(sb, e.route()).append(",\"rule\":");
    nullable(sb, e.rule()).append(",\"outcome\":");
    Json.quote(sb, e.outcome(), false).append(",\"upstream_ms\":");
    if (e.upstreamMicros() < 0) {
      sb.append("null");
    } else {
      sb.append(String.format(Locale.ROOT, "%.3f", e.upstreamMicros() / 1000.0));
    }
    if (e.startMicros() >= 0) {
      long s = Math.floorDiv(e.startMicros(), 1_000_000L);
      long us = Math.floorMod(e.startMicros(), 1_000_000L);
      String t = Instant.ofEpochSecond(s).toString();
      sb.append(",\"start\":\"").append(t, 0, t.length() - 1).append('.')
          .append(String.format(Locale.ROOT, "%06d", us)).append("Z\"");
    }
    if (e.protocol() != null) {
      sb.append(",\"protocol\":");
      Json.quote(sb, e.protocol(), false);
    }
    optional(sb, "peer", e.peer());
    optional(sb, "host", e.host());
    optional(sb, "referer", e.referer());
    optional(sb, "user_agent", e.userAgent());
    if (e.websocket()) {
      sb.append(",\"websocket\":true");
    }
    if (e.forwarding() != null) {
      optional(sb, "x_forwarded_for", e.forwarding().xForwardedFor());
      optional(sb, "forwarded", e.forwarding().forwarded());
      optional(sb, "x_real_ip", e.forwarding().xRealIp());
    }
    return sb.append('}').toString();
  }

  /** A field written only when present, so a log without proxies stays short. */
  private static void optional(StringBuilder sb, String name, String v) {
    if (v != null) {
      sb.append(",\"").append(name).append("\":");
      Json.quote(sb, v, false);
    }
  }

  private static StringBuilder nullable(StringBuilder sb, String v) {
    return v == null ? sb.append("null") : Json.quote(sb, v, false);
  }

  /** A field without spaces or quotes: {@code -} when absent, anything odd escaped. */
  private static String plain(String v) {
    if (v == null || v.isEmpty()) {
      return "-";
    }
    return quoted(v).replace(" ", "\\x20");
  }

  /** Client-chosen text inside quotes: no quote, backslash or control character unescaped. */
  private static String quoted(String v) {
    StringBuilder sb = null;
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) {
        if (sb == null) {
          sb = new StringBuilder(v.length() + 8).append(v, 0, i);
        }
        sb.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
      } else if (sb != null) {
        sb.append(c);
      }
    }
    return sb == null ? v : sb.toString();
  }
}
