package dev.sluice.server.replay;

/** What a log line may say about a request; a format maps its own field names onto these. */
enum Field {
  /** The client address as logged (nginx's {@code $remote_addr}, Sluice's {@code client}). */
  ADDR,
  /** The socket peer when the log has it apart from the address (Sluice's {@code peer}). */
  PEER,
  TIME,
  /**
   * How long the request took (nginx's {@code $request_time}): the time field is when the line
   * was written, at the response's end, and the request arrived this much earlier.
   */
  DURATION,
  /** The request line, {@code METHOD TARGET PROTOCOL}. */
  REQUEST,
  METHOD,
  TARGET,
  PROTOCOL,
  STATUS,
  REFERER,
  USER_AGENT,
  HOST,
  X_FORWARDED_FOR,
  FORWARDED,
  X_REAL_IP,
  /** A session or user value some logs carry; counted per address, never a key. */
  SESSION,
  WEBSOCKET,
  /** What the gateway decided, in Sluice's own logs. */
  ROUTE,
  RULE,
  OUTCOME,
  /** A field the format has and replay does not read. */
  SKIP;

  static final Field[] ALL = values();
}
