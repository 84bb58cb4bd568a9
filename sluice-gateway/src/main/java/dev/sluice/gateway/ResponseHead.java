package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * An upstream response head read in place for the {@link RelayHandler}, and the framing of the
 * body that follows it (RFC 9112, 6.3): none (a {@code HEAD} request, 1xx, 204, 304), a
 * {@code Content-Length}, chunked (tracked chunk by chunk to find the end, the bytes forwarded as
 * they are), or until the upstream closes. {@link #writeHead} writes the head the client gets: the
 * upstream's fields without the hop-by-hop ones ({@link Forwarding}'s table). A response with
 * both framings, or a transfer coding that does not end in chunked, is not valid here: the
 * client gets 502, and the upstream connection is closed.
 * One instance per connection; event loop only.
 */
final class ResponseHead {

  static final int MAX_FIELDS = 100;

  private static final byte[] CONNECTION = HeadWriter.ascii("connection");
  private static final byte[] CONTENT_LENGTH = HeadWriter.ascii("content-length");
  private static final byte[] TRANSFER_ENCODING = HeadWriter.ascii("transfer-encoding");
  private static final byte[][] HOP_BY_HOP = Forwarding.HOP_BY_HOP_RESPONSE.stream()
      .map(HeadWriter::ascii).toArray(byte[][]::new);
  private static final byte[] HTTP_1_1_PREFIX = HeadWriter.ascii("HTTP/1.1");
  private static final byte[] KEEP_ALIVE = HeadWriter.ascii("keep-alive");
  private static final byte[] CLOSE_FIELD = HeadWriter.ascii("connection: close\r\n");

  enum Framing { NONE, LENGTH, CHUNKED, UNTIL_CLOSE }

  private byte[] b = new byte[512];
  private int length;
  private int status;
  private boolean http11;
  private int statusLineEnd;
  private int fields;
  /** Per field: line start, name end, value start, value end, line end; dropped or not. */
  private final int[] at = new int[MAX_FIELDS * 6];
  private String connectionTokens;

  private Framing framing;
  private boolean keepAlive;
  private long remaining;
  private final ChunkedBody chunks = ChunkedBody.lenient();

  /**
   * Reads the head of {@code length} bytes at {@code in}'s reader index; false when it is not a
   * valid HTTP/1.x response head (the client then gets 502).
   */
  boolean parse(ByteBuf in, int length, boolean headRequest) {
    if (b.length < length) {
      b = new byte[Math.max(length, b.length * 2)];
    }
    in.getBytes(in.readerIndex(), b, 0, length);
    this.length = length;
    fields = 0;
    connectionTokens = null;
    if (length < 14 || !startsWith(0, "HTTP/1.")) {
      return false;
    }
    http11 = b[7] == '1';
    if ((!http11 && b[7] != '0') || b[8] != ' ') {
      return false;
    }
    status = 0;
    for (int i = 9; i < 12; i++) {
      if (b[i] < '0' || b[i] > '9') {
        return false;
      }
      status = status * 10 + (b[i] - '0');
    }
    int i = 12;
    while (i < length && b[i] != '\n') {
      i++;
    }
    if (i >= length || b[i - 1] != '\r' || status < 100) {
      return false;
    }
    statusLineEnd = i + 1;
    boolean sawClose = false;
    boolean sawKeepAlive = false;
    long contentLength = -1;
    boolean encoded = false;
    i = statusLineEnd;
    while (i + 1 < length && !(b[i] == '\r' && b[i + 1] == '\n')) {
      if (fields == MAX_FIELDS) {
        return false;
      }
      int start = i;
      while (i < length && b[i] != ':' && b[i] > ' ') {
        i++;
      }
      if (i == start || i >= length || b[i] != ':') {
        return false;
      }
      int nameEnd = i++;
      while (i < length && (b[i] == ' ' || b[i] == '\t')) {
        i++;
      }
      int valueStart = i;
      while (i < length && b[i] != '\r' && b[i] != '\n') {
        i++;
      }
      if (i + 1 >= length || b[i] != '\r' || b[i + 1] != '\n') {
        return false;
      }
      int valueEnd = i;
      while (valueEnd > valueStart && (b[valueEnd - 1] == ' ' || b[valueEnd - 1] == '\t')) {
        valueEnd--;
      }
      i += 2;
      int f = fields++ * 6;
      at[f] = start;
      at[f + 1] = nameEnd;
      at[f + 2] = valueStart;
      at[f + 3] = valueEnd;
      at[f + 4] = i;
      at[f + 5] = 0;
      if (nameIs(f, CONNECTION)) {
        at[f + 5] = 1;
        if (valueIs(valueStart, valueEnd, KEEP_ALIVE)) {
          sawKeepAlive = true;   // the usual value: no token list to read
          continue;
        }
        String v = text(valueStart, valueEnd);
        connectionTokens = connectionTokens == null ? v : connectionTokens + "," + v;
        for (String token : v.split(",", 16)) {
          String t = token.trim();
          if (t.equalsIgnoreCase("close")) {
            sawClose = true;
          } else if (t.equalsIgnoreCase("keep-alive")) {
            sawKeepAlive = true;
          }
        }
      } else if (nameIs(f, CONTENT_LENGTH)) {
        long n = digits(valueStart, valueEnd);
        if (n < 0 || (contentLength >= 0 && n != contentLength)) {
          return false;
        }
        contentLength = n;
      } else if (nameIs(f, TRANSFER_ENCODING)) {
        if (encoded || !endsWithChunked(valueStart, valueEnd)) {
          return false;   // a coding the relay cannot frame: 502, as nginx answers it
        }
        encoded = true;
      } else {
        for (byte[] hop : HOP_BY_HOP) {
          if (nameIs(f, hop)) {
            at[f + 5] = 1;
          }
        }
      }
    }
    if (i + 2 != length) {
      return false;
    }
    keepAlive = (http11 || sawKeepAlive) && !sawClose;
    dropNamedByConnection();
    if (headRequest || status < 200 || status == 204 || status == 304) {
      framing = Framing.NONE;
    } else if (encoded) {
      if (contentLength >= 0) {
        return false;   // both framings: a broken or smuggling upstream, answered 502
      }
      framing = Framing.CHUNKED;
    } else if (contentLength >= 0) {
      framing = Framing.LENGTH;
    } else {
      framing = Framing.UNTIL_CLOSE;
    }
    if (framing == Framing.UNTIL_CLOSE) {
      keepAlive = false;
    }
    remaining = contentLength;
    chunks.reset();
    return true;
  }

  private void dropNamedByConnection() {
    if (connectionTokens == null) {
      return;
    }
    for (String token : connectionTokens.split(",", 16)) {
      String t = token.trim().toLowerCase(java.util.Locale.ROOT);
      if (t.isEmpty() || t.length() > 64 || t.equals("transfer-encoding")
          || t.equals("content-length")) {
        continue;
      }
      dropAll(HeadWriter.ascii(t));
    }
  }

  private void dropAll(byte[] lowerName) {
    for (int f = 0; f < fields * 6; f += 6) {
      if (nameIs(f, lowerName)) {
        at[f + 5] = 1;
      }
    }
  }

  int status() {
    return status;
  }

  boolean interim() {
    return status < 200;
  }

  Framing framing() {
    return framing;
  }

  /** Whether the upstream connection can serve another request after this response. */
  boolean upstreamKeepAlive() {
    return keepAlive;
  }

  /** Whether the client connection closes after this response (its end is the close). */
  boolean closesClient() {
    return framing == Framing.UNTIL_CLOSE;
  }

  /** Writes the status line (as HTTP/1.1) and the end-to-end fields, without the empty line. */
  void writeHead(HeadWriter out) {
    out.put(HTTP_1_1_PREFIX).put(b, 8, statusLineEnd - 8);
    for (int f = 0; f < fields * 6; f += 6) {
      if (at[f + 5] == 0) {
        out.put(b, at[f], at[f + 4] - at[f]);
      }
    }
    if (closesClient()) {
      out.put(CLOSE_FIELD);
    }
  }

  /** The fields read, the dropped ones included ({@link #kept}). */
  int fieldCount() {
    return fields;
  }

  /** Whether field {@code i} goes on: end to end, not hop by hop. */
  boolean kept(int i) {
    return at[i * 6 + 5] == 0;
  }

  /** Field {@code i}'s name in lower case, as HTTP/2 writes names. */
  io.netty.util.AsciiString lowerName(int i) {
    int f = i * 6;
    byte[] name = new byte[at[f + 1] - at[f]];
    for (int j = 0; j < name.length; j++) {
      byte c = b[at[f] + j];
      name[j] = c >= 'A' && c <= 'Z' ? (byte) (c + 32) : c;
    }
    return new io.netty.util.AsciiString(name, false);
  }

  /** Field {@code i}'s value. */
  io.netty.util.AsciiString value(int i) {
    int f = i * 6;
    return new io.netty.util.AsciiString(b, at[f + 2], at[f + 3] - at[f + 2], true);
  }

  /**
   * {@link #body} for a chunked body, its chunks' data copied into {@code data} (what an HTTP/2
   * stream sends as DATA frames).
   */
  int chunkedBody(ByteBuf in, int from, int n, ByteBuf data) {
    return chunks.read(in, from, n, data);
  }

  /** Writes an interim (1xx) response as the client gets it: its status line alone. */
  void writeInterim(HeadWriter out) {
    out.put(HTTP_1_1_PREFIX).put(b, 8, statusLineEnd - 8).crlf();
  }

  /**
   * How many of the {@code n} bytes at {@code from} in {@code in} belong to the body; -1 when the
   * chunked framing is broken. {@link #bodyDone} tells whether the body ended within them.
   */
  int body(ByteBuf in, int from, int n) {
    switch (framing) {
      case NONE:
        return 0;
      case UNTIL_CLOSE:
        return n;
      case LENGTH: {
        int k = (int) Math.min(remaining, n);
        remaining -= k;
        return k;
      }
      default:
        return chunks.read(in, from, n, null);
    }
  }

  boolean bodyDone() {
    switch (framing) {
      case NONE:
        return true;
      case UNTIL_CLOSE:
        return false;
      case LENGTH:
        return remaining == 0;
      default:
        return chunks.done();
    }
  }

  private boolean nameIs(int f, byte[] lower) {
    return HeadWriter.equalsLower(b, at[f], at[f + 1], lower);
  }

  private boolean valueIs(int start, int end, byte[] lower) {
    return HeadWriter.equalsLower(b, start, end, lower);
  }

  private boolean endsWithChunked(int start, int end) {
    String v = text(start, end).trim();
    int comma = v.lastIndexOf(',');
    return v.substring(comma + 1).trim().equalsIgnoreCase("chunked");
  }

  private long digits(int start, int end) {
    if (start == end || end - start > 18) {
      return -1;
    }
    long n = 0;
    for (int i = start; i < end; i++) {
      if (b[i] < '0' || b[i] > '9') {
        return -1;
      }
      n = n * 10 + (b[i] - '0');
    }
    return n;
  }

  private boolean startsWith(int at, String s) {
    for (int k = 0; k < s.length(); k++) {
      if (b[at + k] != s.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  private String text(int start, int end) {
    return new String(b, start, end - start, StandardCharsets.ISO_8859_1);
  }

}
