package dev.sluice.gateway;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.RequestTarget;
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
 * A request head read in place by the {@link RelayHandler}, strictly (RFC 9112, sections 2-7): a
 * token method, a request target of visible characters, {@code HTTP/1.1} or {@code HTTP/1.0},
 * each field a token, a colon and a value of visible characters, spaces, tabs and obs-text, every
 * line ended by CRLF. What the head says about its message is read once here: its body's framing
 * (exactly one valid {@code Content-Length}, or {@code Transfer-Encoding: chunked} alone), the
 * connection's persistence, {@code Expect}, a WebSocket upgrade, and the one {@code Host}; the
 * target is normalised by core's {@link RequestTarget}, the path routes match and the path that
 * is forwarded.
 *
 * <p>A head that breaks a rule is not forwarded: {@link #parse} returns false and
 * {@link #status()} / {@link #problem()} say how to answer (400, 405 for CONNECT, 417, 431, 501
 * for a transfer coding other than chunked, 505). Smuggling vectors all end here: both framings,
 * two lengths, an obfuscated coding, obs-fold, a bare CR, a NUL, a space before a colon, two
 * Hosts, a list in Host, an absolute-form authority that is not the Host.
 *
 * <p>As a {@link RequestView} it makes strings only for what the policy reads; cookies and the
 * query go through a {@link NettyRequestView} of the same head, built on first use. One instance
 * per connection, reused for each request; event loop only.
 */
final class RequestHead implements RequestView {

  static final int MAX_FIELDS = 100;

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

  /** Fields read here, by index into {@link #NAMES}; the rest are {@link #OTHER}. */
  static final int OTHER = -1;
  static final int HOST = 0;
  static final int CONNECTION = 1;
  static final int CONTENT_LENGTH = 2;
  static final int TRANSFER_ENCODING = 3;
  static final int EXPECT = 4;
  static final int UPGRADE = 5;
  /** From here to {@link #HOP_END}: hop-by-hop fields, never forwarded. */
  private static final int HOP_START = 6;
  private static final int HOP_END = 9;
  /** From here to the end: forwarding fields ({@link Forwarding#FORWARDING}). */
  static final int FORWARDING_START = 10;
  private static final byte[][] NAMES;

  static {
    List<String> names = new ArrayList<>(List.of("host", "connection", "content-length",
        "transfer-encoding", "expect", "upgrade"));
    names.addAll(Forwarding.HOP_BY_HOP_REQUEST);
    names.addAll(Forwarding.FORWARDING);
    NAMES = new byte[names.size()][];
    for (int i = 0; i < NAMES.length; i++) {
      NAMES[i] = HeadWriter.ascii(names.get(i));
    }
    if (!names.get(HOP_START).equals(Forwarding.HOP_BY_HOP_REQUEST.get(0))
        || HOP_END != HOP_START + Forwarding.HOP_BY_HOP_REQUEST.size() - 1
        || FORWARDING_START != HOP_END + 1) {
      throw new AssertionError("RequestHead's field table is out of step with Forwarding's");
    }
  }

  private static final byte[] CHUNKED = HeadWriter.ascii("chunked");
  private static final byte[] CONTINUE = HeadWriter.ascii("100-continue");
  private static final byte[] WEBSOCKET = HeadWriter.ascii("websocket");
  /** A dropped field: named by {@code Connection}, or a second forwarding field's mark. */
  private static final int DROPPED = Integer.MIN_VALUE;

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

  private int status;
  private String problem;
  private boolean http10;
  private long contentLength;
  private boolean chunked;
  private boolean expectContinue;
  private boolean keepAlive;
  private boolean websocket;
  private int hostField;
  private RequestTarget target;
  /** The last value of a few header names asked for by identity ({@link #repeated}). */
  private final String[] seenNames = new String[4];
  private final byte[][] seenBytes = new byte[4][];
  private final String[] seenValues = new String[4];
  private byte[] lastTargetBytes;
  private RequestTarget lastTarget;
  private RequestTarget.Rules lastRules;
  private String method;
  private NettyRequestView netty;
  private ClientAddressResolver resolvedBy;
  private ClientAddress clientAddress;

  RequestHead(InetAddress peerAddress, String peer) {
    this.peerAddress = peerAddress;
    this.peer = peer;
  }

  /**
   * Reads the head of {@code length} bytes at {@code in}'s reader index (ending with the empty
   * line); true when it may be forwarded, else {@link #status()} says how to answer.
   */
  boolean parse(ByteBuf in, int length, RequestTarget.Rules paths) {
    if (b.length < length) {
      b = new byte[Math.max(length, b.length * 2)];
    }
    in.getBytes(in.readerIndex(), b, 0, length);
    this.length = length;
    method = null;
    netty = null;
    if (resolvedBy != null && resolvedBy.trustsPeer(peerAddress)) {
      resolvedBy = null;   // read from this request's forwarding headers: resolved again
      clientAddress = null;
    }
    target = null;
    fields = 0;
    status = 400;
    problem = null;
    contentLength = -1;
    chunked = false;
    expectContinue = false;
    websocket = false;
    hostField = -1;
    if (!requestLine() || !fields()) {
      return false;
    }
    return semantics(paths);
  }

  private boolean fail(int status, String problem) {
    this.status = status;
    this.problem = problem;
    return false;
  }

  private boolean requestLine() {
    int i = 0;
    while (i < length && TCHAR[b[i] & 0xff]) {
      i++;
    }
    if (i == 0 || i >= length || b[i] != ' ') {
      return fail(400, "a malformed request line");
    }
    methodEnd = i;
    targetStart = ++i;
    while (i < length && b[i] > ' ' && b[i] < 0x7f) {
      i++;
    }
    targetEnd = i;
    if (targetEnd == targetStart || i + 10 > length || b[i] != ' ') {
      return fail(400, "a malformed request line");
    }
    i++;
    if (!(b[i] == 'H' && b[i + 1] == 'T' && b[i + 2] == 'T' && b[i + 3] == 'P'
        && b[i + 4] == '/' && isDigit(b[i + 5]) && b[i + 6] == '.' && isDigit(b[i + 7])
        && b[i + 8] == '\r' && b[i + 9] == '\n')) {
      return fail(400, "a malformed request line");
    }
    if (b[i + 5] != '1' || (b[i + 7] != '1' && b[i + 7] != '0')) {
      return fail(505, "HTTP/1.1 and HTTP/1.0 only");
    }
    http10 = b[i + 7] == '0';
    lineEnd = i + 10;
    return true;
  }

  private static boolean isDigit(byte c) {
    return c >= '0' && c <= '9';
  }

  private boolean fields() {
    int i = lineEnd;
    while (true) {
      if (i + 1 >= length) {
        return fail(400, "a malformed header section");
      }
      if (b[i] == '\r') {
        // The empty line ends the head, and must be the last of the bytes.
        return b[i + 1] == '\n' && i + 2 == length || fail(400, "a malformed header section");
      }
      if (b[i] == ' ' || b[i] == '\t') {
        return fail(400, "obsolete line folding");
      }
      if (fields == MAX_FIELDS) {
        return fail(431, "more than " + MAX_FIELDS + " header fields");
      }
      int nameStart = i;
      while (i < length && TCHAR[b[i] & 0xff]) {
        i++;
      }
      if (i == nameStart || i >= length || b[i] != ':') {
        return fail(400, "a malformed header field name");
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
        return fail(400, "a control character in a header field");
      }
      i += 2;
      int f = fields++ * 6;
      at[f] = nameStart;
      at[f + 1] = nameEnd;
      at[f + 2] = valueStart;
      at[f + 3] = valueEnd;
      at[f + 4] = i;
      at[f + 5] = kind(nameStart, nameEnd);
    }
  }

  /** What the fields mean together (RFC 9112, 6.1-6.3, 9.3, 3.2). */
  private boolean semantics(RequestTarget.Rules paths) {
    boolean close = false;
    boolean keep = false;
    boolean upgradeToken = false;
    int hosts = 0;
    boolean encoded = false;
    String named = null;
    for (int i = 0; i < fields; i++) {
      int f = i * 6;
      int vs = at[f + 2];
      int ve = at[f + 3];
      switch (at[f + 5]) {
        case HOST -> {
          hosts++;
          hostField = i;
        }
        case CONTENT_LENGTH -> {
          long n = digits(vs, ve);
          if (n < 0) {
            return fail(400, "an invalid Content-Length");
          }
          if (contentLength >= 0) {
            return fail(400, "two Content-Length fields");
          }
          contentLength = n;
        }
        case TRANSFER_ENCODING -> {
          if (encoded || !HeadWriter.equalsLower(b, vs, ve, CHUNKED)) {
            return fail(501, "a transfer coding other than chunked");
          }
          encoded = true;
        }
        case EXPECT -> {
          if (!HeadWriter.equalsLower(b, vs, ve, CONTINUE) || expectContinue) {
            return fail(417, "an expectation other than 100-continue");
          }
          expectContinue = true;
        }
        case UPGRADE -> websocket = HeadWriter.equalsLower(b, vs, ve, WEBSOCKET);
        case CONNECTION -> {
          for (String token : value(i).split(",", 32)) {
            String t = token.strip().toLowerCase(java.util.Locale.ROOT);
            if (t.equals("close")) {
              close = true;
            } else if (t.equals("keep-alive")) {
              keep = true;
            } else if (t.equals("upgrade")) {
              upgradeToken = true;
            } else if (!t.isEmpty() && t.length() <= 64) {
              named = named == null ? t : named + "," + t;
            }
          }
        }
        default -> { }
      }
    }
    if (encoded && contentLength >= 0) {
      return fail(400, "both Content-Length and Transfer-Encoding");
    }
    if (encoded && http10) {
      return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    }
    chunked = encoded;
    if (hosts > 1) {
      return fail(400, "two Host fields");
    }
    if (hosts == 0 && !http10) {
      return fail(400, "no Host field");
    }
    if (hostField >= 0 && !validHost(at[hostField * 6 + 2], at[hostField * 6 + 3])) {
      return fail(400, "an invalid Host");
    }
    if (named != null) {
      dropNamed(named);
    }
    websocket = websocket && upgradeToken && !http10 && isGet();
    keepAlive = http10 ? keep && !close : !close;
    if (methodIs("CONNECT")) {
      return fail(405, "CONNECT is not served");
    }
    target = target(paths);
    if (!target.ok()) {
      return fail(400, target.problem());
    }
    if (target.asterisk() && !methodIs("OPTIONS")) {
      return fail(400, "the asterisk form is for OPTIONS only");
    }
    if (target.authority() != null && (hostField < 0 || !target.authority().equalsIgnoreCase(
        value(hostField)))) {
      return fail(400, "an absolute-form target whose authority is not the Host");
    }
    return true;
  }

  /**
   * The target read by {@code paths}; the last one's when the bytes and the rules are the same (a
   * client sends the same few targets again and again, a flood one target): nothing is made.
   */
  private RequestTarget target(RequestTarget.Rules paths) {
    int n = targetEnd - targetStart;
    if (lastTarget != null && lastRules == paths && lastTargetBytes.length == n
        && java.util.Arrays.equals(lastTargetBytes, 0, n, b, targetStart, targetEnd)) {
      return lastTarget;
    }
    String raw = new String(b, targetStart, n, StandardCharsets.ISO_8859_1);
    RequestTarget t = RequestTarget.parse(raw, paths);
    lastTargetBytes = java.util.Arrays.copyOfRange(b, targetStart, targetEnd);
    lastTarget = t;
    lastRules = paths;
    return t;
  }

  /** {@code host [ ":" port ]}: a registered name, IPv4 or a bracketed IPv6; no list, no '@'. */
  private boolean validHost(int start, int end) {
    if (start == end) {
      return false;
    }
    int i = start;
    if (b[i] == '[') {
      while (i < end && b[i] != ']') {
        byte c = b[i];
        if (!(c == '[' || c == ':' || c == '.' || Character.digit(c, 16) >= 0)) {
          return false;
        }
        i++;
      }
      if (i == end) {
        return false;
      }
      i++;
    } else {
      while (i < end && b[i] != ':') {
        byte c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c == '-'
            || c == '.' || c == '_' || c == '~' || c == '%')) {
          return false;
        }
        i++;
      }
      if (i == start) {
        return false;
      }
    }
    if (i == end) {
      return true;
    }
    if (b[i] != ':') {
      return false;
    }
    for (int k = i + 1; k < end; k++) {
      if (!isDigit(b[k])) {
        return false;
      }
    }
    return end - i <= 6;
  }

  /** Marks the fields {@code Connection} names as hop-by-hop, but never framing or forwarding. */
  private void dropNamed(String names) {
    for (String name : names.split(",")) {
      byte[] lower = HeadWriter.ascii(name);
      for (int i = 0; i < fields; i++) {
        int f = i * 6;
        if (at[f + 5] == OTHER && HeadWriter.equalsLower(b, at[f], at[f + 1], lower)) {
          at[f + 5] = DROPPED;
        }
      }
    }
  }

  private long digits(int start, int end) {
    if (start == end || end - start > 18) {
      return -1;
    }
    long n = 0;
    for (int i = start; i < end; i++) {
      if (!isDigit(b[i])) {
        return -1;
      }
      n = n * 10 + (b[i] - '0');
    }
    return n;
  }

  private int kind(int start, int end) {
    for (int k = 0; k < NAMES.length; k++) {
      if (HeadWriter.equalsLower(b, start, end, NAMES[k])) {
        return k;
      }
    }
    return OTHER;
  }

  private boolean methodIs(String m) {
    if (methodEnd != m.length()) {
      return false;
    }
    for (int k = 0; k < methodEnd; k++) {
      if (b[k] != m.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  /** How to answer a head that {@link #parse} refused: 400, 405, 417, 431, 501 or 505. */
  int status() {
    return status;
  }

  /** Why it was refused, for the answer's detail. */
  String problem() {
    return problem;
  }

  /** The request line's length, CRLF included. */
  int requestLineBytes() {
    return lineEnd;
  }

  int fieldCount() {
    return fields;
  }

  /** A field's kind: one of the constants, {@link #OTHER}, or negative when dropped. */
  int kind(int field) {
    return at[field * 6 + 5];
  }

  /** Whether the field is forwarded as received (not framing, hop-by-hop or forwarding). */
  boolean endToEnd(int field) {
    int k = at[field * 6 + 5];
    return k == OTHER || k == CONTENT_LENGTH || k == TRANSFER_ENCODING || k == EXPECT;
  }

  /** Whether an ordinary field's name is one of {@code lowerNames} (ASCII, lower case). */
  boolean named(int field, byte[][] lowerNames) {
    int f = field * 6;
    if (at[f + 5] != OTHER) {
      return false;
    }
    for (byte[] name : lowerNames) {
      if (HeadWriter.equalsLower(b, at[f], at[f + 1], name)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the field is one of the forwarding fields (X-Forwarded-*, Forwarded, X-Real-IP). */
  boolean forwarding(int field) {
    return at[field * 6 + 5] >= FORWARDING_START;
  }

  /** Writes a field's line as received, CRLF included. */
  void writeField(HeadWriter out, int field) {
    int f = field * 6;
    out.put(b, at[f], at[f + 4] - at[f]);
  }

  /** Writes the method as received. */
  void writeMethod(HeadWriter out) {
    out.put(b, 0, methodEnd);
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

  /** The kind of {@link Forwarding#FORWARDING}'s {@code name}. */
  static int forwardingKind(String name) {
    return FORWARDING_START + Forwarding.FORWARDING.indexOf(name);
  }

  boolean isHead() {
    return methodIs("HEAD");
  }

  private boolean isGet() {
    return methodIs("GET");
  }

  boolean http10() {
    return http10;
  }

  /** The body's length, or -1 when it is chunked or absent ({@link #hasBody()}). */
  long contentLength() {
    return contentLength;
  }

  boolean chunked() {
    return chunked;
  }

  boolean hasBody() {
    return chunked || contentLength > 0;
  }

  boolean expectContinue() {
    return expectContinue;
  }

  /** Whether the client keeps the connection open after this exchange. */
  boolean keepAlive() {
    return keepAlive;
  }

  /** The Host field's value, or null (an HTTP/1.0 request may have none). */
  String host() {
    return hostField < 0 ? null : value(hostField);
  }

  boolean hasHost() {
    return hostField >= 0;
  }

  /** Writes the Host field's value as received. */
  void writeHost(HeadWriter out) {
    int f = hostField * 6;
    out.put(b, at[f + 2], at[f + 3] - at[f + 2]);
  }

  /** The normalised target: what routes match and what is forwarded. */
  RequestTarget target() {
    return target;
  }

  /** The head as a Netty request with the normalised target, for the Netty handlers. */
  HttpRequest toHttpRequest() {
    DefaultHttpHeaders h = new DefaultHttpHeaders(false);
    for (int i = 0; i < fields; i++) {
      int f = i * 6;
      if (at[f + 5] != DROPPED) {
        h.add(new String(b, at[f], at[f + 1] - at[f], StandardCharsets.ISO_8859_1), value(i));
      }
    }
    return new DefaultHttpRequest(http10 ? HttpVersion.HTTP_1_0 : HttpVersion.HTTP_1_1,
        HttpMethod.valueOf(method()),
        target != null ? target.forwardTarget()
            : new String(b, targetStart, targetEnd - targetStart, StandardCharsets.ISO_8859_1),
        h);
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
    return target.path();
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
        return repeated(name, i);
      }
    }
    return null;
  }

  /**
   * Field {@code i}'s value, the same string as the last time {@code name} was asked for when its
   * bytes are the same: a client sends the same {@code Accept} and {@code Origin} with every
   * request, and a refusal reads both.
   */
  private String repeated(String name, int i) {
    int slot = -1;
    for (int k = 0; k < seenNames.length; k++) {
      if (seenNames[k] == name) {
        slot = k;
        break;
      }
      if (seenNames[k] == null) {
        slot = k;
        seenNames[k] = name;
        break;
      }
    }
    int f = i * 6;
    int vs = at[f + 2];
    int ve = at[f + 3];
    if (slot < 0) {
      return value(i);
    }
    byte[] last = seenBytes[slot];
    if (last != null && last.length == ve - vs
        && java.util.Arrays.equals(last, 0, last.length, b, vs, ve)) {
      return seenValues[slot];
    }
    String v = value(i);
    seenBytes[slot] = java.util.Arrays.copyOfRange(b, vs, ve);
    seenValues[slot] = v;
    return v;
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
    for (int i = 0; i < fields; i++) {
      if (nameIs(i, "cookie")) {
        return netty().cookie(name);
      }
    }
    return null;   // no Cookie field: no request object is made to find none (a challenged flood)
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
    return websocket;
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
