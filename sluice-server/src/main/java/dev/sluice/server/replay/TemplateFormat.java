package dev.sluice.server.replay;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A line format written as a template of literal text and fields: nginx's {@code log_format}
 * ({@code $remote_addr - $remote_user [$time_local] "$request" ...}) and Envoy's access log
 * format ({@code [%START_TIME%] "%REQ(:METHOD)% ..."}), compiled once into steps. A line is
 * matched left to right: each literal must appear as written, and a field ends where the next
 * literal's first byte appears (nginx escapes {@code "} inside quoted fields as {@code \x22}, so a
 * quote ends a quoted field). Text after the last field is ignored, so Sluice's own
 * {@code common} and {@code combined} lines, which add fields at the end, read as CLF.
 */
final class TemplateFormat implements LineFormat {

  /** nginx's predefined {@code combined}, also Apache's. */
  static final String COMBINED = "$remote_addr - $remote_user [$time_local] \"$request\" $status "
      + "$body_bytes_sent \"$http_referer\" \"$http_user_agent\"";
  /** The Common Log Format. */
  static final String COMMON = "$remote_addr - $remote_user [$time_local] \"$request\" $status "
      + "$body_bytes_sent";
  /** Envoy's default access log format. */
  static final String ENVOY = "[%START_TIME%] \"%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% "
      + "%PROTOCOL%\" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% "
      + "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% \"%REQ(X-FORWARDED-FOR)%\" \"%REQ(USER-AGENT)%\" "
      + "\"%REQ(X-REQUEST-ID)%\" \"%REQ(:AUTHORITY)%\" \"%UPSTREAM_HOST%\"";

  /** How a time field is written. */
  enum Time { CLF, ISO, EPOCH }

  private static final Map<String, Field> NGINX = new LinkedHashMap<>();
  private static final Set<String> NGINX_SKIPPED = Set.of("remote_user", "remote_port",
      "body_bytes_sent", "bytes_sent", "request_length", "connection",
      "connection_requests", "pipe", "msec_", "server_name", "server_port", "server_addr",
      "scheme", "https", "args", "query_string", "gzip_ratio", "request_id", "hostname",
      "ssl_protocol", "ssl_cipher", "ssl_server_name", "binary_remote_addr", "document_uri",
      "proxy_add_x_forwarded_for", "upstream_addr", "upstream_status", "upstream_response_time",
      "upstream_connect_time", "upstream_header_time", "upstream_response_length",
      "upstream_cache_status", "request_completion", "limit_req_status", "limit_conn_status",
      "nginx_version", "pid", "time_local_", "realip_remote_port", "server_protocol_");
  private static final Set<String> NGINX_FAMILIES = Set.of("http_", "sent_http_", "cookie_",
      "arg_", "upstream_http_", "upstream_cookie_", "sent_trailer_");

  static {
    NGINX.put("remote_addr", Field.ADDR);
    NGINX.put("realip_remote_addr", Field.PEER);
    NGINX.put("time_local", Field.TIME);
    NGINX.put("time_iso8601", Field.TIME);
    NGINX.put("msec", Field.TIME);
    NGINX.put("request_time", Field.DURATION);
    NGINX.put("request", Field.REQUEST);
    NGINX.put("request_method", Field.METHOD);
    NGINX.put("request_uri", Field.TARGET);
    NGINX.put("uri", Field.TARGET);
    NGINX.put("server_protocol", Field.PROTOCOL);
    NGINX.put("status", Field.STATUS);
    NGINX.put("http_referer", Field.REFERER);
    NGINX.put("http_user_agent", Field.USER_AGENT);
    NGINX.put("host", Field.HOST);
    NGINX.put("http_host", Field.HOST);
    NGINX.put("http_x_forwarded_for", Field.X_FORWARDED_FOR);
    NGINX.put("http_forwarded", Field.FORWARDED);
    NGINX.put("http_x_real_ip", Field.X_REAL_IP);
    NGINX.put("http_upgrade", Field.WEBSOCKET);
  }

  private static final Map<String, Field> ENVOY_FIELDS = new LinkedHashMap<>();
  private static final Set<String> ENVOY_SKIPPED = Set.of("RESPONSE_FLAGS", "BYTES_RECEIVED",
      "BYTES_SENT", "DURATION", "UPSTREAM_HOST", "UPSTREAM_CLUSTER", "RESPONSE_CODE_DETAILS",
      "CONNECTION_TERMINATION_DETAILS", "UPSTREAM_TRANSPORT_FAILURE_REASON", "ROUTE_NAME",
      "UPSTREAM_LOCAL_ADDRESS", "DOWNSTREAM_LOCAL_ADDRESS", "REQUESTED_SERVER_NAME",
      "REQUEST_DURATION", "RESPONSE_DURATION", "RESPONSE_TX_DURATION", "CONNECTION_ID",
      "UPSTREAM_REQUEST_ATTEMPT_COUNT", "HOSTNAME", "GRPC_STATUS", "RESPONSE_FLAGS_LONG",
      "REQUEST_HEADERS_BYTES", "RESPONSE_HEADERS_BYTES", "DOWNSTREAM_TLS_VERSION");

  static {
    ENVOY_FIELDS.put("START_TIME", Field.TIME);
    ENVOY_FIELDS.put("PROTOCOL", Field.PROTOCOL);
    ENVOY_FIELDS.put("RESPONSE_CODE", Field.STATUS);
    ENVOY_FIELDS.put("DOWNSTREAM_REMOTE_ADDRESS", Field.ADDR);
    ENVOY_FIELDS.put("DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT", Field.ADDR);
    ENVOY_FIELDS.put("DOWNSTREAM_DIRECT_REMOTE_ADDRESS", Field.PEER);
    ENVOY_FIELDS.put("DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT", Field.PEER);
    ENVOY_FIELDS.put("REQ(:METHOD)", Field.METHOD);
    ENVOY_FIELDS.put("REQ(:PATH)", Field.TARGET);
    ENVOY_FIELDS.put("REQ(X-ENVOY-ORIGINAL-PATH?:PATH)", Field.TARGET);
    ENVOY_FIELDS.put("REQ(:AUTHORITY)", Field.HOST);
    ENVOY_FIELDS.put("REQ(HOST)", Field.HOST);
    ENVOY_FIELDS.put("REQ(USER-AGENT)", Field.USER_AGENT);
    ENVOY_FIELDS.put("REQ(REFERER)", Field.REFERER);
    ENVOY_FIELDS.put("REQ(X-FORWARDED-FOR)", Field.X_FORWARDED_FOR);
    ENVOY_FIELDS.put("REQ(FORWARDED)", Field.FORWARDED);
    ENVOY_FIELDS.put("REQ(X-REAL-IP)", Field.X_REAL_IP);
    ENVOY_FIELDS.put("REQ(UPGRADE)", Field.WEBSOCKET);
  }

  private final String name;
  /** literals[i] comes before fields[i]; literals[n] after the last field. */
  private final byte[][] literals;
  private final Field[] fields;
  private final Time[] times;
  /** Envoy: the address is the right-most X-Forwarded-For entry (Envoy appends the peer). */
  private final boolean peerInForwardedFor;
  private final Field client;

  private TemplateFormat(String name, List<byte[]> literals, List<Field> fields, List<Time> times,
      boolean peerInForwardedFor) {
    this.name = name;
    this.literals = literals.toArray(new byte[0][]);
    this.fields = fields.toArray(new Field[0]);
    this.times = times.toArray(new Time[0]);
    this.peerInForwardedFor = peerInForwardedFor;
    this.client = fields.contains(Field.PEER) ? Field.PEER
        : fields.contains(Field.ADDR) ? Field.ADDR : Field.X_FORWARDED_FOR;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Field clientField() {
    return client;
  }

  /** nginx's {@code log_format} text. */
  static TemplateFormat nginx(String name, String template) {
    List<byte[]> literals = new ArrayList<>();
    List<Field> fields = new ArrayList<>();
    List<Time> times = new ArrayList<>();
    StringBuilder lit = new StringBuilder();
    int i = 0;
    while (i < template.length()) {
      char c = template.charAt(i);
      if (c != '$') {
        lit.append(c);
        i++;
        continue;
      }
      boolean braced = i + 1 < template.length() && template.charAt(i + 1) == '{';
      int j = braced ? i + 2 : i + 1;
      int from = j;
      while (j < template.length() && (Character.isLetterOrDigit(template.charAt(j))
          || template.charAt(j) == '_')) {
        j++;
      }
      String var = template.substring(from, j).toLowerCase(Locale.ROOT);
      if (braced) {
        if (j >= template.length() || template.charAt(j) != '}') {
          throw new IllegalArgumentException("column " + (i + 1) + ": ${ without its }");
        }
        j++;
      }
      if (var.isEmpty()) {
        throw new IllegalArgumentException("column " + (i + 1) + ": a $ without a variable name");
      }
      Field f = NGINX.get(var);
      if (f == null) {
        boolean family = NGINX_FAMILIES.stream().anyMatch(var::startsWith);
        if (!family && !NGINX_SKIPPED.contains(var)) {
          throw new IllegalArgumentException("column " + (i + 1) + ": unknown nginx variable $"
              + var + " (expected: one of $" + String.join(", $", NGINX.keySet())
              + ", a $http_NAME header, or another nginx variable replay skips such as "
              + "$body_bytes_sent, $upstream_addr)");
        }
        f = Field.SKIP;
      }
      add(literals, fields, times, lit, f, var.equals("time_local") ? Time.CLF
          : var.equals("msec") ? Time.EPOCH : Time.ISO, i);
      i = j;
    }
    literals.add(lit.toString().getBytes(StandardCharsets.UTF_8));
    return check(new TemplateFormat(name, literals, fields, times, false), fields);
  }

  /** Envoy's access log format text ({@code %COMMAND%}, {@code %REQ(HEADER)%}). */
  static TemplateFormat envoy(String name, String template) {
    List<byte[]> literals = new ArrayList<>();
    List<Field> fields = new ArrayList<>();
    List<Time> times = new ArrayList<>();
    StringBuilder lit = new StringBuilder();
    int i = 0;
    String t = template.endsWith("\n") ? template.substring(0, template.length() - 1) : template;
    while (i < t.length()) {
      char c = t.charAt(i);
      if (c != '%') {
        lit.append(c);
        i++;
        continue;
      }
      int j = t.indexOf('%', i + 1);
      if (j < 0) {
        throw new IllegalArgumentException("column " + (i + 1) + ": a % without its closing %");
      }
      if (j == i + 1) {
        lit.append('%');
        i = j + 1;
        continue;
      }
      String command = t.substring(i + 1, j);
      String key = command.replaceAll(":[0-9]+$", "").toUpperCase(Locale.ROOT);
      if (key.startsWith("START_TIME")) {
        key = "START_TIME";
      }
      Field f = ENVOY_FIELDS.get(key);
      if (f == null) {
        if (!ENVOY_SKIPPED.contains(key) && !key.startsWith("REQ(") && !key.startsWith("RESP(")
            && !key.startsWith("TRAILER(") && !key.startsWith("DYNAMIC_METADATA(")
            && !key.startsWith("FILTER_STATE(")) {
          throw new IllegalArgumentException("column " + (i + 1) + ": unknown Envoy command %"
              + command + "% (expected: one of %" + String.join("%, %", ENVOY_FIELDS.keySet())
              + "%, %REQ(HEADER)%, or another command replay skips such as %DURATION%)");
        }
        f = Field.SKIP;
      }
      add(literals, fields, times, lit, f, Time.ISO, i);
      i = j + 1;
    }
    literals.add(lit.toString().getBytes(StandardCharsets.UTF_8));
    boolean peerInXff = !fields.contains(Field.ADDR) && !fields.contains(Field.PEER);
    return check(new TemplateFormat(name, literals, fields, times, peerInXff), fields);
  }

  private static void add(List<byte[]> literals, List<Field> fields, List<Time> times,
      StringBuilder lit, Field f, Time time, int column) {
    if (!fields.isEmpty() && lit.length() == 0) {
      throw new IllegalArgumentException("column " + (column + 1) + ": two fields with no text "
          + "between them cannot be told apart");
    }
    literals.add(lit.toString().getBytes(StandardCharsets.UTF_8));
    lit.setLength(0);
    fields.add(f);
    times.add(time);
  }

  private static TemplateFormat check(TemplateFormat format, List<Field> fields) {
    if (!fields.contains(Field.TIME)) {
      throw new IllegalArgumentException("no time field (expected: $time_local, $time_iso8601, "
          + "$msec or %START_TIME%): replay runs the clock from the log");
    }
    if (!fields.contains(Field.REQUEST) && !(fields.contains(Field.METHOD)
        && fields.contains(Field.TARGET))) {
      throw new IllegalArgumentException("no request (expected: $request, or $request_method "
          + "and $request_uri)");
    }
    if (!fields.contains(Field.ADDR) && !fields.contains(Field.PEER)
        && !fields.contains(Field.X_FORWARDED_FOR)) {
      throw new IllegalArgumentException("no client address (expected: $remote_addr, or "
          + "%DOWNSTREAM_REMOTE_ADDRESS% / %REQ(X-FORWARDED-FOR)%)");
    }
    return format;
  }

  @Override
  public boolean parse(byte[] b, int start, int end, LogRecord r) {
    int p = start;
    int n = fields.length;
    for (int k = 0; k < n; k++) {
      byte[] lit = literals[k];
      if (!startsWith(b, p, end, lit)) {
        r.error = k == 0 ? "does not start as the format does" : "text between fields differs";
        return false;
      }
      p += lit.length;
      byte[] next = literals[k + 1];
      int e;
      if (k == n - 1 && next.length == 0) {
        e = end;
      } else if (k == n - 1 && endsWith(b, p, end, next)) {
        // The last field ends where the line does (nginx's combined: the user agent and its
        // quote), found without scanning it; a line with more after it is scanned below.
        e = end - next.length;
      } else {
        e = find(b, p, end, next);
        if (e < 0) {
          r.error = "line ends early";
          return false;
        }
      }
      if (!field(fields[k], times[k], b, p, e, r)) {
        return false;
      }
      p = e;
    }
    if (!startsWith(b, p, end, literals[n])) {
      r.error = "text after the last field differs";
      return false;
    }
    if (r.micros == Long.MIN_VALUE) {
      r.error = "no time";
      return false;
    }
    // nginx writes a line when the response ends; the request arrived $request_time earlier.
    r.micros -= r.durationMicros;
    if (peerInForwardedFor) {
      peerFromForwardedFor(r);
    }
    return true;
  }

  /** Where {@code lit} next appears at or after {@code p}; its first byte is the delimiter. */
  private static int find(byte[] b, int p, int end, byte[] lit) {
    byte first = lit[0];
    int i = p;
    while (i < end) {
      i = Bytes.indexOf(b, i, end, first);
      if (i < 0) {
        return -1;
      }
      if (lit.length == 1 || startsWith(b, i, end, lit)) {
        return i;
      }
      i++;
    }
    return -1;
  }

  private static boolean endsWith(byte[] b, int p, int end, byte[] lit) {
    return end - p >= lit.length && startsWith(b, end - lit.length, end, lit);
  }

  private static boolean startsWith(byte[] b, int p, int end, byte[] lit) {
    if (end - p < lit.length) {
      return false;
    }
    for (int i = 0; i < lit.length; i++) {
      if (b[p + i] != lit[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean field(Field f, Time time, byte[] b, int s, int e, LogRecord r) {
    switch (f) {
      case TIME -> {
        long t = time == Time.CLF ? r.clf(b, s, e) : time == Time.EPOCH ? Times.epoch(b, s, e)
            : Times.iso(b, s, e);
        if (t == Times.BAD) {
          r.error = "bad time";
          return false;
        }
        r.micros = t;
      }
      case DURATION -> {
        long t = Times.epoch(b, s, e);
        if (t == Times.BAD || t < 0) {
          r.error = "bad request time";
          return false;
        }
        r.durationMicros = t;
        r.set(Field.DURATION, s, e);
      }
      case STATUS -> {
        int v = 0;
        if (e - s != 3) {
          r.error = "bad status";
          return false;
        }
        for (int i = s; i < e; i++) {
          int d = b[i] - '0';
          if (d < 0 || d > 9) {
            r.error = "bad status";
            return false;
          }
          v = v * 10 + d;
        }
        r.status = v;
      }
      case REQUEST -> {
        // METHOD SP TARGET SP PROTOCOL; a target with spaces in it keeps them.
        int sp1 = -1;
        for (int i = s; i < e; i++) {
          if (b[i] == ' ') {
            sp1 = i;
            break;
          }
        }
        if (sp1 <= s) {
          r.error = "bad request line";
          return false;
        }
        int sp2 = -1;
        for (int i = e - 1; i > sp1; i--) {
          if (b[i] == ' ') {
            sp2 = i;
            break;
          }
        }
        r.set(Field.METHOD, s, sp1);
        if (sp2 > sp1 && e - sp2 > 5 && b[sp2 + 1] == 'H' && b[sp2 + 2] == 'T') {
          r.set(Field.TARGET, sp1 + 1, sp2);
          r.set(Field.PROTOCOL, sp2 + 1, e);
        } else {
          r.set(Field.TARGET, sp1 + 1, e);
        }
      }
      case WEBSOCKET -> {
        // $http_upgrade / %REQ(UPGRADE)%: "websocket" in any case.
        r.websocket = e - s == 9 && (b[s] | 0x20) == 'w' && (b[s + 2] | 0x20) == 'b';
      }
      case SKIP -> {
        // not read
      }
      default -> r.set(f, s, e);
    }
    return true;
  }

  /** Envoy's default line has no peer: it is the last X-Forwarded-For entry Envoy appended. */
  private static void peerFromForwardedFor(LogRecord r) {
    int i = Field.X_FORWARDED_FOR.ordinal();
    if (!r.has(Field.X_FORWARDED_FOR)) {
      return;
    }
    int s = r.start[i];
    int e = r.end[i];
    int comma = -1;
    for (int k = e - 1; k >= s; k--) {
      if (r.buf[k] == ',') {
        comma = k;
        break;
      }
    }
    int ps = comma + 1;
    while (ps < e && r.buf[ps] == ' ') {
      ps++;
    }
    r.set(Field.PEER, comma < 0 ? s : ps, e);
    if (comma < 0) {
      r.start[i] = -1;
    } else {
      r.set(Field.X_FORWARDED_FOR, s, comma);
    }
  }

  /** Reads only up to the client's field: the partition of a line costs a fraction of its parse. */
  @Override
  public long partitionHash(byte[] b, int start, int end, LogRecord scratch) {
    if (peerInForwardedFor) {
      return LineFormat.super.partitionHash(b, start, end, scratch);
    }
    int p = start;
    for (int k = 0; k < fields.length; k++) {
      byte[] lit = literals[k];
      if (!startsWith(b, p, end, lit)) {
        return 0;
      }
      p += lit.length;
      byte[] next = literals[k + 1];
      int e = k == fields.length - 1 && next.length == 0 ? end : find(b, p, end, next);
      if (e < 0) {
        return 0;
      }
      if (fields[k] == client) {
        return Hashes.of(b, p, e);
      }
      p = e;
    }
    return 0;
  }
}
