package dev.sluice.server.replay;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * JSON lines, one object a line, with a mapping from replay's fields to the object's top-level
 * keys. {@link #SLUICE} is Sluice's own {@code logging.access: json}; {@code json:time=@timestamp,
 * client=remote_ip,...} maps any other. Values are strings, numbers, booleans or null; other
 * keys (nested objects too) are skipped without being decoded.
 */
final class JsonFormat implements LineFormat {

  /** The names a mapping may give, and the field each fills. */
  static final Map<String, Field> NAMES = new LinkedHashMap<>();

  static {
    NAMES.put("time", Field.TIME);
    NAMES.put("client", Field.ADDR);
    NAMES.put("peer", Field.PEER);
    NAMES.put("method", Field.METHOD);
    NAMES.put("path", Field.TARGET);
    NAMES.put("request", Field.REQUEST);
    NAMES.put("protocol", Field.PROTOCOL);
    NAMES.put("status", Field.STATUS);
    NAMES.put("host", Field.HOST);
    NAMES.put("referer", Field.REFERER);
    NAMES.put("user_agent", Field.USER_AGENT);
    NAMES.put("x_forwarded_for", Field.X_FORWARDED_FOR);
    NAMES.put("forwarded", Field.FORWARDED);
    NAMES.put("x_real_ip", Field.X_REAL_IP);
    NAMES.put("session", Field.SESSION);
    NAMES.put("websocket", Field.WEBSOCKET);
    NAMES.put("route", Field.ROUTE);
    NAMES.put("rule", Field.RULE);
    NAMES.put("outcome", Field.OUTCOME);
  }

  /** Sluice's JSON access log: {@code start} (arrival, microseconds) wins over {@code ts}. */
  static final JsonFormat SLUICE = new JsonFormat("json", mapping(
      "time=start,time=ts,client=client,peer=peer,method=method,path=path,protocol=protocol,"
          + "status=status,host=host,referer=referer,user_agent=user_agent,"
          + "x_forwarded_for=x_forwarded_for,forwarded=forwarded,x_real_ip=x_real_ip,"
          + "websocket=websocket,route=route,rule=rule,outcome=outcome"));

  private final String name;
  private final byte[][] keys;
  private final Field[] fields;
  /** Lower wins: the first key given for a field is preferred when a line has several. */
  private final int[] rank;

  private JsonFormat(String name, List<String[]> pairs) {
    this.name = name;
    keys = new byte[pairs.size()][];
    fields = new Field[pairs.size()];
    rank = new int[pairs.size()];
    Map<Field, Integer> seen = new LinkedHashMap<>();
    for (int i = 0; i < pairs.size(); i++) {
      keys[i] = pairs.get(i)[1].getBytes(StandardCharsets.UTF_8);
      fields[i] = NAMES.get(pairs.get(i)[0]);
      rank[i] = seen.merge(fields[i], 1, Integer::sum) - 1;
    }
  }

  /** {@code json:time=@timestamp,client=remote_ip,...}: replay's names, then the log's keys. */
  static JsonFormat mapped(String spec) {
    List<String[]> pairs = mapping(spec);
    List<String> given = pairs.stream().map(p -> p[0]).toList();
    if (!given.contains("time")) {
      throw new IllegalArgumentException("no time=KEY (replay runs the clock from the log)");
    }
    if (!given.contains("client") && !given.contains("peer")) {
      throw new IllegalArgumentException("no client=KEY (the client address)");
    }
    if (!given.contains("path") && !given.contains("request")) {
      throw new IllegalArgumentException("no path=KEY (or request=KEY for a request line)");
    }
    return new JsonFormat("json:" + spec, pairs);
  }

  private static List<String[]> mapping(String spec) {
    List<String[]> pairs = new ArrayList<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      int eq = p.indexOf('=');
      if (eq <= 0 || eq == p.length() - 1) {
        throw new IllegalArgumentException("'" + p + "' (expected: NAME=KEY, NAME one of "
            + String.join(", ", NAMES.keySet()) + ")");
      }
      String n = p.substring(0, eq).trim().toLowerCase(Locale.ROOT);
      if (!NAMES.containsKey(n)) {
        throw new IllegalArgumentException("unknown field '" + n + "' (expected: one of "
            + String.join(", ", NAMES.keySet()) + ")");
      }
      pairs.add(new String[] {n, p.substring(eq + 1).trim()});
    }
    return pairs;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean parse(byte[] b, int start, int end, LogRecord r) {
    int[] taken = new int[Field.ALL.length];
    java.util.Arrays.fill(taken, Integer.MAX_VALUE);
    int p = skipSpace(b, start, end);
    if (p >= end || b[p] != '{') {
      r.error = "not a JSON object";
      return false;
    }
    p++;
    while (true) {
      p = skipSpace(b, p, end);
      if (p < end && b[p] == '}') {
        break;
      }
      if (p >= end || b[p] != '"') {
        r.error = "bad JSON (expected a key)";
        return false;
      }
      int ks = p + 1;
      int ke = stringEnd(b, ks, end);
      if (ke < 0) {
        r.error = "bad JSON (unterminated string)";
        return false;
      }
      p = skipSpace(b, ke + 1, end);
      if (p >= end || b[p] != ':') {
        r.error = "bad JSON (expected :)";
        return false;
      }
      p = skipSpace(b, p + 1, end);
      int key = -1;
      for (int i = 0; i < keys.length; i++) {
        if (java.util.Arrays.equals(b, ks, ke, keys[i], 0, keys[i].length)) {
          if (rank[i] < taken[fields[i].ordinal()]) {
            key = i;
          }
          break;
        }
      }
      int ve = valueEnd(b, p, end);
      if (ve < 0) {
        r.error = "bad JSON value";
        return false;
      }
      if (key >= 0 && !value(fields[key], b, p, ve, r)) {
        return false;
      }
      if (key >= 0) {
        taken[fields[key].ordinal()] = rank[key];
      }
      p = skipSpace(b, ve, end);
      if (p < end && b[p] == ',') {
        p++;
        continue;
      }
      if (p < end && b[p] == '}') {
        break;
      }
      r.error = "bad JSON (expected , or })";
      return false;
    }
    if (r.micros == Long.MIN_VALUE) {
      r.error = "no time";
      return false;
    }
    if (!r.has(Field.TARGET)) {
      r.error = "no path";
      return false;
    }
    return true;
  }

  private static boolean value(Field f, byte[] b, int s, int e, LogRecord r) {
    boolean string = b[s] == '"';
    if (!string && e - s == 4 && b[s] == 'n') {
      return true;
    }
    switch (f) {
      case TIME -> {
        long t = string ? Times.iso(b, s + 1, e - 1) : Times.epoch(b, s, e);
        if (t == Times.BAD) {
          r.error = "bad time";
          return false;
        }
        r.micros = t;
      }
      case STATUS -> {
        int v = 0;
        int from = string ? s + 1 : s;
        int to = string ? e - 1 : e;
        for (int i = from; i < to; i++) {
          int d = b[i] - '0';
          if (d < 0 || d > 9 || v > 999) {
            r.error = "bad status";
            return false;
          }
          v = v * 10 + d;
        }
        r.status = v;
      }
      case WEBSOCKET -> r.websocket = !string && b[s] == 't'
          || string && e - s == 11 && (b[s + 1] | 0x20) == 'w';
      case REQUEST -> {
        String line = string ? unquote(b, s, e) : null;
        if (line == null) {
          return true;
        }
        String[] parts = line.split(" ");
        if (parts.length >= 2) {
          r.set(Field.METHOD, parts[0]);
          r.set(Field.TARGET, parts[1]);
          if (parts.length >= 3) {
            r.set(Field.PROTOCOL, parts[2]);
          }
        }
      }
      default -> {
        if (string) {
          if (stringIsPlain(b, s + 1, e - 1)) {
            r.set(f, s + 1, e - 1);
          } else {
            r.set(f, unquote(b, s, e));
          }
        } else {
          r.set(f, s, e);
        }
      }
    }
    return true;
  }

  private static boolean stringIsPlain(byte[] b, int s, int e) {
    for (int i = s; i < e; i++) {
      if (b[i] == '\\') {
        return false;
      }
    }
    return true;
  }

  /** The string literal {@code b[s, e)} (quotes included) decoded. */
  static String unquote(byte[] b, int s, int e) {
    StringBuilder sb = new StringBuilder(e - s);
    int i = s + 1;
    int last = e - 1;
    int runStart = i;
    while (i < last) {
      if (b[i] != '\\') {
        i++;
        continue;
      }
      sb.append(new String(b, runStart, i - runStart, StandardCharsets.UTF_8));
      char c = (char) b[i + 1];
      switch (c) {
        case 'n' -> sb.append('\n');
        case 't' -> sb.append('\t');
        case 'r' -> sb.append('\r');
        case 'b' -> sb.append('\b');
        case 'f' -> sb.append('\f');
        case 'u' -> {
          if (i + 5 < last + 1) {
            sb.append((char) Integer.parseInt(new String(b, i + 2, 4, StandardCharsets.US_ASCII),
                16));
            i += 4;
          }
        }
        default -> sb.append(c);
      }
      i += 2;
      runStart = i;
    }
    sb.append(new String(b, runStart, Math.max(0, last - runStart), StandardCharsets.UTF_8));
    return sb.toString();
  }

  private static int skipSpace(byte[] b, int p, int end) {
    while (p < end && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r')) {
      p++;
    }
    return p;
  }

  /** The index of the closing quote of a string whose content starts at {@code p}, or -1. */
  private static int stringEnd(byte[] b, int p, int end) {
    for (int i = p; i < end; i++) {
      if (b[i] == '\\') {
        i++;
      } else if (b[i] == '"') {
        return i;
      }
    }
    return -1;
  }

  /** The end (exclusive) of the value at {@code p}, nested objects and arrays skipped; or -1. */
  private static int valueEnd(byte[] b, int p, int end) {
    if (p >= end) {
      return -1;
    }
    if (b[p] == '"') {
      int q = stringEnd(b, p + 1, end);
      return q < 0 ? -1 : q + 1;
    }
    if (b[p] == '{' || b[p] == '[') {
      int depth = 0;
      for (int i = p; i < end; i++) {
        byte c = b[i];
        if (c == '"') {
          i = stringEnd(b, i + 1, end);
          if (i < 0) {
            return -1;
          }
        } else if (c == '{' || c == '[') {
          if (++depth > 64) {
            return -1;
          }
        } else if (c == '}' || c == ']') {
          if (--depth == 0) {
            return i + 1;
          }
        }
      }
      return -1;
    }
    int i = p;
    while (i < end && b[i] != ',' && b[i] != '}' && b[i] != ' ' && b[i] != '\t') {
      i++;
    }
    return i == p ? -1 : i;
  }
}
