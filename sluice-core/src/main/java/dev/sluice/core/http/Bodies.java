package dev.sluice.core.http;

import dev.sluice.core.Decision;

/**
 * The bodies of generated responses, JSON or HTML: a limit's 429, a fail-closed refusal while
 * the store cannot answer, and a gateway's own errors (502, 504...).
 */
public final class Bodies {

  public static final String JSON = "application/json; charset=utf-8";
  public static final String HTML = "text/html; charset=utf-8";

  /** The built-in 429 page; {@code {{rule}}}, {@code {{retryAfter}}}, {@code {{retryAfterMs}}}. */
  public static final String DEFAULT_HTML = "<!doctype html>\n<html lang=\"en\">\n<head>\n"
      + "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n"
      + "<title>Too many requests</title>\n</head>\n<body>\n<h1>Too many requests</h1>\n"
      + "<p>This address has sent more requests than the limit <b>{{rule}}</b> allows in a "
      + "short time, so this one was not processed.</p>\n"
      + "<p>Please wait {{retryAfter}} seconds, then try again.</p>\n</body>\n</html>\n";

  /** The built-in page of a fail-closed refusal while the store cannot answer. */
  public static final String UNAVAILABLE_HTML = "<!doctype html>\n<html lang=\"en\">\n<head>\n"
      + "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n"
      + "<title>Temporarily unavailable</title>\n</head>\n<body>\n"
      + "<h1>Temporarily unavailable</h1>\n"
      + "<p>This request could not be checked right now, so it was not processed.</p>\n"
      + "<p>Please try again in {{retryAfter}} seconds.</p>\n</body>\n</html>\n";

  private Bodies() {}

  /** The 429 body of {@code d}: {@code {"error":"too many requests","retryAfter":2,...}}. */
  public static String refusalJson(Decision d) {
    StringBuilder sb = new StringBuilder(128).append("{\"error\":\"too many requests\",\"retryAfter\":")
        .append(d.retryAfterSeconds()).append(",\"retryAfterMs\":")
        .append(Math.max(0, d.retryAfterMillis()));
    if (d.rule() != null) {
      sb.append(",\"rule\":");
      Json.quote(sb, d.rule());
    }
    if (!Double.isNaN(d.currentScore())) {
      sb.append(",\"currentScore\":").append(Json.number(d.currentScore()))
          .append(",\"maxScore\":").append(Json.number(d.maxScore()));
    }
    return sb.append('}').toString();
  }

  /** The 429 page of {@code d}, from {@code template} or the built-in one when null. */
  public static String refusalHtml(Decision d, String template) {
    String page = template == null ? DEFAULT_HTML : template;
    return page.replace("{{retryAfter}}", Long.toString(d.retryAfterSeconds()))
        .replace("{{retryAfterMs}}", Long.toString(Math.max(0, d.retryAfterMillis())))
        .replace("{{rule}}", html(d.rule() == null ? "" : d.rule()));
  }

  /**
   * The body of a fail-closed refusal while the store cannot answer. It names no rule and no
   * limit: nothing was counted, so there is nothing to report but when to try again.
   */
  public static String unavailableJson(Decision d) {
    return "{\"error\":\"rate limiter unavailable\",\"retryAfter\":" + d.retryAfterSeconds()
        + "}";
  }

  public static String unavailableHtml(Decision d, String template) {
    return (template == null ? UNAVAILABLE_HTML : template)
        .replace("{{retryAfter}}", Long.toString(d.retryAfterSeconds()))
        .replace("{{retryAfterMs}}", Long.toString(Math.max(0, d.retryAfterMillis())))
        .replace("{{rule}}", "");
  }

  /** {@code {"error":"bad gateway"}}. */
  public static String errorJson(String error) {
    return "{\"error\":" + Json.quote(error) + "}";
  }

  /** A plain page for a generated error, like 502 "bad gateway". */
  public static String errorHtml(int status, String reasonPhrase, String error) {
    String title = status + " " + html(reasonPhrase);
    return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        + "<title>" + title + "</title>\n</head>\n<body>\n<h1>" + title + "</h1>\n<p>"
        + html(error) + "</p>\n</body>\n</html>\n";
  }

  /** {@code s} with HTML's special characters escaped. */
  public static String html(String s) {
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
}
