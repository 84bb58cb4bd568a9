package dev.sluice.server.admin;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One admin request's path segments and query parameters, percent-decoded from the raw URI, so a
 * key holding '/' or '%' travels as one segment ({@code %2F}, {@code %25}). Bad encoding is a
 * {@link BadRequest} naming the part.
 */
final class AdminRequest {

  /** Input the API refuses with 400: the field, the value as given and what was expected. */
  static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;
    final String field;
    final String value;
    final String expected;

    BadRequest(String field, String value, String expected) {
      super(field + " : " + value + " (expected: " + expected + ")", null, false, false);
      this.field = field;
      this.value = value;
      this.expected = expected;
    }
  }

  final List<String> segments;
  final Map<String, String> query;

  private AdminRequest(List<String> segments, Map<String, String> query) {
    this.segments = segments;
    this.query = query;
  }

  static AdminRequest parse(String rawPath, String rawQuery) throws BadRequest {
    List<String> segments = new ArrayList<>();
    for (String s : rawPath.substring(1).split("/", -1)) {
      segments.add(decode("path", s, false));
    }
    Map<String, String> query = new LinkedHashMap<>();
    if (rawQuery != null && !rawQuery.isEmpty()) {
      for (String pair : rawQuery.split("&")) {
        int eq = pair.indexOf('=');
        String name = decode("query", eq < 0 ? pair : pair.substring(0, eq), true);
        String value = eq < 0 ? "" : decode(name, pair.substring(eq + 1), true);
        if (query.put(name, value) != null) {
          throw new BadRequest(name, quote(value), "at most one " + name);
        }
      }
    }
    return new AdminRequest(segments, query);
  }

  /** The query parameters other than {@code allowed} are a mistake worth naming. */
  void only(String... allowed) throws BadRequest {
    for (String name : query.keySet()) {
      if (!List.of(allowed).contains(name)) {
        throw new BadRequest("query", quote(name), allowed.length == 0 ? "no parameters"
            : "one of " + String.join(", ", allowed));
      }
    }
  }

  /** A switch: absent or {@code false} is off; present bare or as {@code true} is on. */
  boolean flag(String name) throws BadRequest {
    String v = query.get(name);
    if (v == null || v.equals("false")) {
      return false;
    }
    if (v.isEmpty() || v.equals("true")) {
      return true;
    }
    throw new BadRequest(name, quote(v), "true, false or no value (?" + name + ")");
  }

  /** An integer parameter from 1 to {@code max}, or {@code fallback} when absent. */
  int intParam(String name, int fallback, int max) throws BadRequest {
    String v = query.get(name);
    if (v == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v);
      if (n >= 1 && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new BadRequest(name, quote(v), "an integer from 1 to " + max);
  }

  static String quote(String s) {
    String shown = s.length() > 80 ? s.substring(0, 80) + "..." : s;
    return "\"" + shown + "\"";
  }

  /** Strict percent-decoding as UTF-8; in a query '+' is a space. */
  static String decode(String field, String s, boolean plusIsSpace) throws BadRequest {
    if (s.indexOf('%') < 0 && !(plusIsSpace && s.indexOf('+') >= 0)) {
      return s;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '+' && plusIsSpace) {
        bytes.write(' ');
      } else if (c != '%') {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      } else {
        int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
        int lo = hi < 0 ? -1 : Character.digit(s.charAt(i + 2), 16);
        if (lo < 0) {
          throw new BadRequest(field, quote(s), "'%' followed by two hex digits");
        }
        bytes.write(hi << 4 | lo);
        i += 2;
      }
    }
    byte[] raw = bytes.toByteArray();
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(raw)).toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      throw new BadRequest(field, quote(s), "percent-encoded UTF-8");
    }
  }
}
