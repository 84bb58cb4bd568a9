package dev.sluice.server.gateway;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.RequestView;
import dev.sluice.netty.NettyRequestView;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A request head read in place for the {@link RelayHandler}: the positions of the request line
 * and of each header line in a copy of the bytes, checked strictly (RFC 9112: a token method, an
 * origin-form target of visible characters, {@code HTTP/1.1}; each field a token, a colon and a
 * value of visible characters, spaces and tabs; every line ended by CRLF). A head that does not
 * parse, or that the relay does not forward as bytes (a body, hop-by-hop fields, duplicate
 * {@code Host}), is {@linkplain #parse refused} and left to Netty's decoder and the full pipeline,
 * which answers malformed ones with 400.
 *
 * <p>As a {@link RequestView} it makes strings only for what the policy reads; cookies and the
 * query go through a {@link NettyRequestView} of the same head, built on first use. One instance
 * per connection, reused for each request; event loop only.
 */
final class RequestHead implements RequestView {

  static final int MAX_FIELDS = 100;

  private static final byte[] HTTP_1_1 = " HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final boolean[] TCHAR = new boolean[256];

  static {
    for (char c = '0'; c <= '9'; c++) {
      TCHAR[c] = true;
    }
    for (char c = 'a'; c <= 'z'; c++) {
      TCHAR[c] = true;
      TCHAR[c - 32] = true;
    }
    for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
      TCHAR[c] = true;
    }
  }

  /** Fields the relay treats specially, by index into {@link #NAMES}. */
  static final int OTHER = -1;
  static final int HOST = 0;
  static final int CONNECTION = 1;
  static final int CONTENT_LENGTH = 2;
  static final int X_FORWARDED_FOR = 3;
  static final int FORWARDED = 4;
  static final int X_FORWARDED_HOST = 5;
  static final int X_FORWARDED_PROTO = 6;
  /** From here on: fields that keep a head from the relay (a body, hop-by-hop, an upgrade). */
  private static final int REFUSED = 7;
  private static final byte[][] NAMES = names("host", "connection", "content-length",
      "x-forwarded-for", "forwarded", "x-forwarded-host", "x-forwarded-proto",
      "transfer-encoding", "te", "trailer", "upgrade", "expect", "keep-alive",
      "proxy-connection", "access-control-request-method");

  private byte[] b = new byte[1024];
  private int length;
  private int methodEnd;
  private int targetStart;
  private int targetEnd;
  /** The request line's end: the index after its CRLF. */
  private int lineEnd;
  private int fields;
  /** Per field: name start, name end, value start, value end, line end (after CRLF), kind. */
  private final int[] at = new int[MAX_FIELDS * 6];

  private final InetAddress peerAddress;
  private final String peer;
  private String method;
  private String path;
  private NettyRequestView netty;
  private ClientAddressResolver resolvedBy;
  private ClientAddress clientAddress;

  RequestHead(InetAddress peerAddress, String peer) {
    this.peerAddress = peerAddress;
    this.peer = peer;
  }

  /**
   * Reads the head of {@code length} bytes at {@code in}'s reader index (ending with the empty
   * line); true when it parses and the relay may forward it.
   */
  boolean parse(ByteBuf in, int length) {
    if (b.length < length) {
      b = new byte[Math.max(length, b.length * 2)];
    }
    in.getBytes(in.readerIndex(), b, 0, length);
    this.length = length;
    method = null;
    path = null;
    netty = null;
    resolvedBy = null;
    clientAddress = null;
    fields = 0;
    return requestLine() && fields();
  }

  private boolean requestLine() {
    int i = 0;
    while (i < length && TCHAR[b[i] & 0xff]) {
      i++;
    }
    if (i == 0 || i >= length || b[i] != ' ') {
      return false;
    }
    methodEnd = i;
    targetStart = ++i;
    if (i >= length || b[i] != '/') {
      return false;
    }
    while (i < length && b[i] > ' ' && b[i] < 0x7f) {
      i++;
    }
    targetEnd = i;
    if (i + HTTP_1_1.length > length) {
      return false;
    }
    for (int k = 0; k < HTTP_1_1.length; k++) {
      if (b[i + k] != HTTP_1_1[k]) {
        return false;
      }
    }
    lineEnd = i + HTTP_1_1.length;
    return true;
  }

  private boolean fields() {
    int i = lineEnd;
    int hosts = 0;
    while (true) {
      if (i + 1 >= length) {
        return false;
      }
      if (b[i] == '\r') {
        // The empty line ends the head, and must be the last of the bytes.
        return b[i + 1] == '\n' && i + 2 == length && hosts == 1;
      }
      if (fields == MAX_FIELDS) {
        return false;
      }
      int nameStart = i;
      while (i < length && TCHAR[b[i] & 0xff]) {
        i++;
      }
      if (i == nameStart || i >= length || b[i] != ':') {
        return false;
      }
      int nameEnd = i++;
      while (i < length && (b[i] == ' ' || b[i] == '\t')) {
        i++;
      }
      int valueStart = i;
      while (i < length && (b[i] >= ' ' || b[i] == '\t' || b[i] < 0) && b[i] != 0x7f) {
        i++;
      }
      int valueEnd = i;
      while (valueEnd > valueStart && (b[valueEnd - 1] == ' ' || b[valueEnd - 1] == '\t')) {
        valueEnd--;
      }
      if (i + 1 >= length || b[i] != '\r' || b[i + 1] != '\n') {
        return false;
      }
      i += 2;
      int kind = kind(nameStart, nameEnd);
      if (kind >= REFUSED) {
        return false;
      }
      if (kind == HOST && ++hosts > 1) {
        return false;
      }
      if (kind == CONNECTION && !equalsIgnoreCase(valueStart, valueEnd, NAMES[12])) {
        return false;   // only "Connection: keep-alive", the default, is dropped and relayed
      }
      if (kind == CONTENT_LENGTH && !(valueEnd - valueStart == 1 && b[valueStart] == '0')) {
        return false;
      }
      int f = fields++ * 6;
      at[f] = nameStart;
      at[f + 1] = nameEnd;
      at[f + 2] = valueStart;
      at[f + 3] = valueEnd;
      at[f + 4] = i;
      at[f + 5] = kind;
    }
  }

  private int kind(int start, int end) {
    for (int k = 0; k < NAMES.length; k++) {
      if (equalsIgnoreCase(start, end, NAMES[k])) {
        return k;
      }
    }
    return OTHER;
  }

  private static byte[][] names(String... names) {
    byte[][] bytes = new byte[names.length][];
    for (int i = 0; i < names.length; i++) {
      bytes[i] = HeadWriter.ascii(names[i]);
    }
    return bytes;
  }

  private boolean equalsIgnoreCase(int start, int end, byte[] lower) {
    return HeadWriter.equalsLower(b, start, end, lower);
  }


  /** The request line's length, CRLF included. */
  int requestLineBytes() {
    return lineEnd;
  }

  int fieldCount() {
    return fields;
  }

  int kind(int field) {
    return at[field * 6 + 5];
  }

  /** Writes the request line as received. */
  void writeRequestLine(HeadWriter out) {
    out.put(b, 0, lineEnd);
  }

  /** Writes a field's line as received, CRLF included. */
  void writeField(HeadWriter out, int field) {
    int f = field * 6;
    out.put(b, at[f], at[f + 4] - at[f]);
  }

  /** Writes a field's value as received. */
  void writeValue(HeadWriter out, int field) {
    int f = field * 6;
    out.put(b, at[f + 2], at[f + 3] - at[f + 2]);
  }

  /** A field's value as text (ISO-8859-1, as Netty decodes it). */
  String value(int field) {
    int f = field * 6;
    return new String(b, at[f + 2], at[f + 3] - at[f + 2], StandardCharsets.ISO_8859_1);
  }

  /** Every value of the fields of {@code kind}, comma-joined; null when there is none. */
  String joined(int kind) {
    String joined = null;
    for (int i = 0; i < fields; i++) {
      if (at[i * 6 + 5] == kind) {
        joined = joined == null ? value(i) : joined + ", " + value(i);
      }
    }
    return joined;
  }

  boolean has(int kind) {
    for (int i = 0; i < fields; i++) {
      if (at[i * 6 + 5] == kind) {
        return true;
      }
    }
    return false;
  }

  boolean isHead() {
    return methodEnd == 4 && b[0] == 'H' && b[1] == 'E' && b[2] == 'A' && b[3] == 'D';
  }

  /** The head as a Netty request, for generated answers (CORS, {@code Accept}). */
  HttpRequest toHttpRequest() {
    DefaultHttpHeaders h = new DefaultHttpHeaders(false);
    for (int i = 0; i < fields; i++) {
      int f = i * 6;
      h.add(new String(b, at[f], at[f + 1] - at[f], StandardCharsets.ISO_8859_1), value(i));
    }
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(method()),
        new String(b, targetStart, targetEnd - targetStart, StandardCharsets.ISO_8859_1), h);
  }

  @Override
  public String method() {
    if (method == null && methodEnd == 3 && b[0] == 'G' && b[1] == 'E' && b[2] == 'T') {
      method = "GET";
    } else if (method == null) {
      method = HttpMethod.valueOf(new String(b, 0, methodEnd, StandardCharsets.ISO_8859_1))
          .name();
    }
    return method;
  }

  @Override
  public String path() {
    if (path == null) {
      int end = targetStart;
      while (end < targetEnd && b[end] != '?' && b[end] != '#') {
        end++;
      }
      path = new String(b, targetStart, end - targetStart, StandardCharsets.ISO_8859_1);
    }
    return path;
  }

  @Override
  public List<String> headers(String name) {
    List<String> values = null;
    for (int i = 0; i < fields; i++) {
      if (nameIs(i, name)) {
        if (values == null) {
          values = new ArrayList<>(2);
        }
        values.add(value(i));
      }
    }
    return values == null ? List.of() : values;
  }

  @Override
  public String header(String name) {
    for (int i = 0; i < fields; i++) {
      if (nameIs(i, name)) {
        return value(i);
      }
    }
    return null;
  }

  private boolean nameIs(int field, String name) {
    int f = field * 6;
    int start = at[f];
    int n = at[f + 1] - start;
    if (n != name.length()) {
      return false;
    }
    for (int k = 0; k < n; k++) {
      int c = b[start + k];
      int d = name.charAt(k);
      if (c != d) {
        if (c >= 'A' && c <= 'Z') {
          c += 32;
        }
        if (d >= 'A' && d <= 'Z') {
          d += 32;
        }
        if (c != d) {
          return false;
        }
      }
    }
    return true;
  }

  @Override
  public String cookie(String name) {
    return netty().cookie(name);
  }

  @Override
  public String query(String name) {
    return netty().query(name);
  }

  private NettyRequestView netty() {
    if (netty == null) {
      netty = NettyRequestView.of(toHttpRequest(), null);
    }
    return netty;
  }

  @Override
  public String peer() {
    return peer;
  }

  @Override
  public boolean websocketUpgrade() {
    return false;   // an Upgrade field keeps a head from the relay
  }

  /** Resolved once per request and resolver, as {@link NettyRequestView} does. */
  @Override
  public ClientAddress clientAddress(ClientAddressResolver resolver) {
    if (resolver != resolvedBy) {
      clientAddress = peerAddress != null ? resolver.resolvePeer(peerAddress, this::headers)
          : resolver.resolve(peer, this::headers);
      resolvedBy = resolver;
    }
    return clientAddress;
  }

  @Override
  public String toString() {
    return "RequestHead{" + new String(b, 0, Math.max(0, lineEnd - 2), StandardCharsets.ISO_8859_1)
        + " from " + peer + "}";
  }
}
