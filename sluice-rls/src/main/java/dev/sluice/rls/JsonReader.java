package dev.sluice.rls;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict, bounded JSON reader for {@code POST /v1/check} bodies: objects become maps, arrays
 * lists, numbers {@code Long} (or {@code Double}), strings, booleans and null as themselves.
 * Nesting is capped at {@value #MAX_DEPTH} levels and duplicate keys are refused, so a hostile
 * body costs at most its (already bounded) length; errors name the offset.
 */
final class JsonReader {

  static final int MAX_DEPTH = 16;

  private final String s;
  private int i;

  private JsonReader(String s) {
    this.s = s;
  }

  /** The value of {@code text}; throws {@link CheckRequest.Invalid} naming what is wrong. */
  static Object parse(String text) throws CheckRequest.Invalid {
    JsonReader r = new JsonReader(text);
    Object v = r.value(0);
    r.ws();
    if (r.i != text.length()) {
      throw r.fail("end of input");
    }
    return v;
  }

  private Object value(int depth) throws CheckRequest.Invalid {
    if (depth > MAX_DEPTH) {
      throw fail("at most " + MAX_DEPTH + " levels of nesting");
    }
    ws();
    if (i >= s.length()) {
      throw fail("a value");
    }
    char c = s.charAt(i);
    switch (c) {
      case '{' -> {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (peek('}')) {
          i++;
          return m;
        }
        while (true) {
          ws();
          if (!peek('"')) {
            throw fail("a string key");
          }
          String k = string();
          ws();
          expect(':');
          if (m.containsKey(k)) {
            throw fail("each key once (\"" + k + "\" repeats)");
          }
          m.put(k, value(depth + 1));
          ws();
          if (peek(',')) {
            i++;
          } else {
            expect('}');
            return m;
          }
        }
      }
      case '[' -> {
        i++;
        List<Object> l = new ArrayList<>();
        ws();
        if (peek(']')) {
          i++;
          return l;
        }
        while (true) {
          l.add(value(depth + 1));
          ws();
          if (peek(',')) {
            i++;
          } else {
            expect(']');
            return l;
          }
        }
      }
      case '"' -> {
        return string();
      }
      default -> {
        if (s.startsWith("true", i)) {
          i += 4;
          return Boolean.TRUE;
        } else if (s.startsWith("false", i)) {
          i += 5;
          return Boolean.FALSE;
        } else if (s.startsWith("null", i)) {
          i += 4;
          return null;
        }
        return number();
      }
    }
  }

  private Object number() throws CheckRequest.Invalid {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0 && i - start < 32) {
      i++;
    }
    String t = s.substring(start, i);
    try {
      return t.matches("-?[0-9]{1,18}") ? (Object) Long.parseLong(t) : (Object) Double.parseDouble(t);
    } catch (NumberFormatException e) {
      i = start;
      throw fail("a value");
    }
  }

  private String string() throws CheckRequest.Invalid {
    i++;
    StringBuilder sb = new StringBuilder();
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '"') {
        return sb.toString();
      } else if (c == '\\') {
        if (i >= s.length()) {
          break;
        }
        char e = s.charAt(i++);
        switch (e) {
          case '"', '\\', '/' -> sb.append(e);
          case 'b' -> sb.append('\b');
          case 'f' -> sb.append('\f');
          case 'n' -> sb.append('\n');
          case 'r' -> sb.append('\r');
          case 't' -> sb.append('\t');
          case 'u' -> {
            if (i + 4 > s.length()) {
              throw fail("four hex digits");
            }
            try {
              sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            } catch (NumberFormatException ex) {
              throw fail("four hex digits");
            }
            i += 4;
          }
          default -> throw fail("a valid escape");
        }
      } else if (c < 0x20) {
        throw fail("no control characters in strings");
      } else {
        sb.append(c);
      }
    }
    throw fail("a closing quote");
  }

  private void ws() {
    while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
  }

  private boolean peek(char c) {
    return i < s.length() && s.charAt(i) == c;
  }

  private void expect(char c) throws CheckRequest.Invalid {
    if (!peek(c)) {
      throw fail("'" + c + "'");
    }
    i++;
  }

  private CheckRequest.Invalid fail(String expected) {
    return new CheckRequest.Invalid("body : invalid JSON at offset " + i + " (expected: "
        + expected + ")");
  }
}
