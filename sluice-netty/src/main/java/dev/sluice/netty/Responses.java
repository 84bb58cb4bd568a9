package dev.sluice.netty;

import dev.sluice.core.Decision;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/** Builds the bodies and headers of generated responses. */
final class Responses {

  static final String DEFAULT_HTML = "<!doctype html>\n<html lang=\"en\">\n<head>\n"
      + "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n"
      + "<title>Too many requests</title>\n</head>\n<body>\n<h1>Too many requests</h1>\n"
      + "<p>This address has sent more requests than the limit <b>{{rule}}</b> allows in a "
      + "short time, so this one was not processed.</p>\n"
      + "<p>Please wait {{retryAfter}} seconds, then try again.</p>\n</body>\n</html>\n";

  static final String UNAVAILABLE_HTML = "<!doctype html>\n<html lang=\"en\">\n<head>\n"
      + "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n"
      + "<title>Temporarily unavailable</title>\n</head>\n<body>\n"
      + "<h1>Temporarily unavailable</h1>\n"
      + "<p>This request could not be checked right now, so it was not processed.</p>\n"
      + "<p>Please try again in {{retryAfter}} seconds.</p>\n</body>\n</html>\n";

  private static final int MAX_ACCEPT_CHARS = 2048;

  private Responses() {}

  /** A complete response with a JSON body, {@code Cache-Control: no-store} and CORS headers. */
  static FullHttpResponse json(HttpRequest request, HttpResponseStatus status, String json,
      CorsHeaders cors) {
    return body(request, status, json, "application/json; charset=utf-8", cors);
  }

  static FullHttpResponse body(HttpRequest request, HttpResponseStatus status, String text,
      String contentType, CorsHeaders cors) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    HttpVersion version = request == null ? HttpVersion.HTTP_1_1 : request.protocolVersion();
    FullHttpResponse r = new DefaultFullHttpResponse(version, status, Unpooled.wrappedBuffer(bytes));
    HttpHeaders h = r.headers();
    h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
    h.set(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    h.set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
    if (cors != null) {
      cors.apply(request, h);
    }
    return r;
  }

  /** The 429 body of {@code decision} for a client that asked for {@code JSON}. */
  static String refusalJson(Decision d) {
    StringBuilder sb = new StringBuilder(128).append("{\"error\":\"too many requests\",\"retryAfter\":")
        .append(d.retryAfterSeconds()).append(",\"retryAfterMs\":")
        .append(Math.max(0, d.retryAfterMillis()));
    if (d.rule() != null) {
      sb.append(",\"rule\":");
      jsonString(sb, d.rule());
    }
    if (!Double.isNaN(d.currentScore())) {
      sb.append(",\"currentScore\":").append(number(d.currentScore()))
          .append(",\"maxScore\":").append(number(d.maxScore()));
    }
    return sb.append('}').toString();
  }

  /**
   * The body of a fail-closed refusal while the store cannot answer. It names no rule and no
   * limit: nothing was counted, so there is nothing to report but when to try again.
   */
  static String unavailableJson(Decision d) {
    return "{\"error\":\"rate limiter unavailable\",\"retryAfter\":" + d.retryAfterSeconds()
        + "}";
  }

  static String unavailableHtml(Decision d, String template) {
    return (template == null ? UNAVAILABLE_HTML : template)
        .replace("{{retryAfter}}", Long.toString(d.retryAfterSeconds()))
        .replace("{{retryAfterMs}}", Long.toString(Math.max(0, d.retryAfterMillis())))
        .replace("{{rule}}", "");
  }

  /** A plain page for a generated error, like 502 "bad gateway". */
  static String errorHtml(HttpResponseStatus status, String error) {
    String title = status.code() + " " + html(status.reasonPhrase());
    return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        + "<title>" + title + "</title>\n</head>\n<body>\n<h1>" + title + "</h1>\n<p>"
        + html(error) + "</p>\n</body>\n</html>\n";
  }

  static String refusalHtml(Decision d, String template) {
    String page = template == null ? DEFAULT_HTML : template;
    return page.replace("{{retryAfter}}", Long.toString(d.retryAfterSeconds()))
        .replace("{{retryAfterMs}}", Long.toString(Math.max(0, d.retryAfterMillis())))
        .replace("{{rule}}", html(d.rule() == null ? "" : d.rule()));
  }

  static String number(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }

  static void jsonString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  static String jsonString(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2);
    jsonString(sb, s);
    return sb.toString();
  }

  static String html(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '&' -> sb.append("&amp;");
        case '"' -> sb.append("&quot;");
        case '\'' -> sb.append("&#39;");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }

  /**
   * True when the client prefers HTML to JSON: {@code text/html} has a higher quality than
   * {@code application/json} in {@code Accept} (a browser's {@code text/html,...,*}{@code /*;q=0.8}).
   * Ties, a missing header and garbage all give JSON.
   */
  static boolean prefersHtml(List<String> accept) {
    if (accept.isEmpty()) {
      return false;
    }
    String header = accept.size() == 1 ? accept.get(0) : String.join(",", accept);
    if (header.length() > MAX_ACCEPT_CHARS) {
      header = header.substring(0, MAX_ACCEPT_CHARS);
    }
    try {
      return quality(header, "text", "html") > quality(header, "application", "json");
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The quality the most specific matching range of {@code header} gives {@code type/sub}. */
  static double quality(String header, String type, String sub) {
    double best = 0;
    int specificity = -1;
    for (String range : header.split(",", 64)) {
      String[] parts = range.split(";", 16);
      String media = parts[0].trim().toLowerCase(Locale.ROOT);
      int slash = media.indexOf('/');
      if (slash < 0) {
        continue;
      }
      String t = media.substring(0, slash);
      String s = media.substring(slash + 1);
      int spec;
      if (t.equals(type) && s.equals(sub)) {
        spec = 2;
      } else if (t.equals(type) && s.equals("*")) {
        spec = 1;
      } else if (t.equals("*") && s.equals("*")) {
        spec = 0;
      } else {
        continue;
      }
      double q = 1;
      for (int i = 1; i < parts.length; i++) {
        String p = parts[i].trim();
        if (p.length() > 2 && (p.charAt(0) == 'q' || p.charAt(0) == 'Q') && p.charAt(1) == '=') {
          try {
            q = Double.parseDouble(p.substring(2).trim());
          } catch (NumberFormatException e) {
            q = 0;
          }
          if (!(q >= 0 && q <= 1)) {
            q = 0;
          }
        }
      }
      if (spec > specificity) {
        specificity = spec;
        best = q;
      }
    }
    return best;
  }
}
