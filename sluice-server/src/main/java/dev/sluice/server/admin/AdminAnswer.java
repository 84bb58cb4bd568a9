package dev.sluice.server.admin;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One answer of the admin listener: a status, a content type, a body and extra headers; the
 * listener adds its own (the content security policy, {@code no-store}, the length). An answer
 * that opens an event stream carries the stream instead of a body.
 */
public final class AdminAnswer {

  final int status;
  final String type;
  final byte[] body;
  final Map<String, String> headers;
  /** The streams to open one on, with the first event to send; null for a plain answer. */
  final EventStreams streams;
  final byte[] firstEvent;
  /** What to answer when every stream is taken. */
  final AdminAnswer whenFull;

  private AdminAnswer(int status, String type, byte[] body, Map<String, String> headers,
      EventStreams streams, byte[] firstEvent, AdminAnswer whenFull) {
    this.status = status;
    this.type = type;
    this.body = body;
    this.headers = headers;
    this.streams = streams;
    this.firstEvent = firstEvent;
    this.whenFull = whenFull;
  }

  public static AdminAnswer of(int status, String type, byte[] body) {
    return new AdminAnswer(status, type, body, Map.of(), null, null, null);
  }

  public static AdminAnswer of(int status, String type, String body) {
    return of(status, type, body.getBytes(StandardCharsets.UTF_8));
  }

  /** A JSON answer; {@code json} gets its final newline here when it has none. */
  public static AdminAnswer json(int status, String json) {
    return of(status, "application/json", json.endsWith("\n") ? json : json + "\n");
  }

  static AdminAnswer text(int status, String text) {
    return of(status, "text/plain; charset=utf-8", text);
  }

  /** An event stream on {@code streams}, starting with {@code first} (or nothing). */
  static AdminAnswer eventStream(EventStreams streams, byte[] first, AdminAnswer whenFull) {
    return new AdminAnswer(200, "text/event-stream; charset=utf-8", new byte[0], Map.of(),
        streams, first, whenFull);
  }

  /** This answer with one more header (replacing one of that name). */
  public AdminAnswer with(String name, String value) {
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.put(name, value);
    return new AdminAnswer(status, type, body, Map.copyOf(h), streams, firstEvent, whenFull);
  }

  public int status() {
    return status;
  }

  /** The body as text, for tests and logs. */
  public String text() {
    return new String(body, StandardCharsets.UTF_8);
  }
}
