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

  /** The 403 of a denial: {@code {"error":"forbidden","reason":"deny list"}}, or a page. */
  public static String denied(String reason, boolean html) {
    if (html) {
      return errorHtml(403, "Forbidden", "This request was not processed: " + reason + ".");
    }
    StringBuilder sb = new StringBuilder(64).append("{\"error\":\"forbidden\",\"reason\":");
    Json.quote(sb, reason == null ? "forbidden" : reason);
    return sb.append('}').toString();
  }

  /** The 429 body of {@code d}: {@code {"error":"too many requests","retryAfter":2,...}}. */
  public static String refusalJson(Decision d) {
    return refusalJsonNaming(d, null);
  }

  /**
   * The built-in 429 body of a rule whose action is {@code action} ({@code challenge}): the
   * same as {@link #refusalJson(Decision)} with {@code "action":"challenge"} last; null: none.
   */
  static String refusalJsonNaming(Decision d, String action) {
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
    if (action != null) {
      sb.append(",\"action\":");
      Json.quote(sb, action);
    }
    return sb.append('}').toString();
  }

  /**
   * Placeholders of a JSON body template; each becomes a JSON value, so the template writes
   * them bare: {@code {"error":"slow down","retryAfter":{{retryAfter}},"rule":{{rule}}}}.
   * Numbers: {@code retryAfter} (seconds, at least 1), {@code retryAfterMs}, {@code limit},
   * {@code remaining}; strings (JSON-escaped and quoted, or {@code null}): {@code rule},
   * {@code limitName}.
   */
  public static final java.util.List<String> JSON_PLACEHOLDERS =
      java.util.List.of("retryAfter", "retryAfterMs", "limit", "remaining", "rule", "limitName");

  /** The 429 JSON body of {@code d}, from {@code template} or the built-in one when null. */
  public static String refusalJson(Decision d, String template) {
    return template == null ? refusalJson(d) : fill(template, d);
  }

  /** The 503 JSON body of {@code d}, from {@code template} or the built-in one when null. */
  public static String unavailableJson(Decision d, String template) {
    return template == null ? unavailableJson(d) : fill(template, d);
  }

  /**
   * Why {@code template} is not a JSON body template, or null when it is: one JSON value once
   * each placeholder is filled, naming only {@link #JSON_PLACEHOLDERS}.
   */
  public static String jsonTemplateProblem(String template) {
    StringBuilder sb = new StringBuilder(template.length() + 32);
    int i = 0;
    while (i < template.length()) {
      int open = template.indexOf("{{", i);
      if (open < 0) {
        sb.append(template, i, template.length());
        break;
      }
      int close = template.indexOf("}}", open + 2);
      String name = close < 0 ? null : template.substring(open + 2, close);
      if (name == null || !JSON_PLACEHOLDERS.contains(name)) {
        return "placeholder " + (name == null ? template.substring(open) : "{{" + name + "}}")
            + " is not one of " + JSON_PLACEHOLDERS;
      }
      sb.append(template, i, open).append(name.equals("rule") || name.equals("limitName")
          ? "\"x\"" : "1");
      i = close + 2;
    }
    int start = JsonScan.skipWs(sb, 0);
    int end = start < sb.length() ? JsonScan.skipValue(sb, start) : -1;
    if (end < 0 || JsonScan.skipWs(sb, end) != sb.length()
        || (sb.charAt(start) != '{' && sb.charAt(start) != '[')) {
      return "not one JSON object or array once placeholders are filled";
    }
    return null;
  }

  private static String fill(String template, Decision d) {
    StringBuilder sb = new StringBuilder(template.length() + 32);
    int i = 0;
    while (i < template.length()) {
      int open = template.indexOf("{{", i);
      int close = open < 0 ? -1 : template.indexOf("}}", open + 2);
      if (close < 0) {
        sb.append(template, i, template.length());
        break;
      }
      sb.append(template, i, open);
      switch (template.substring(open + 2, close)) {
        case "retryAfter" -> sb.append(d.retryAfterSeconds());
        case "retryAfterMs" -> sb.append(Math.max(0, d.retryAfterMillis()));
        case "limit" -> sb.append(d.degraded() ? 0 : d.limit());
        case "remaining" -> sb.append(d.degraded() ? 0 : Math.max(0, d.remaining()));
        case "rule" -> orNull(sb, d.degraded() ? null : d.rule());
        case "limitName" -> orNull(sb, d.degraded() ? null : d.limitName());
        default -> sb.append(template, open, close + 2);
      }
      i = close + 2;
    }
    return sb.toString();
  }

  private static void orNull(StringBuilder sb, String s) {
    if (s == null) {
      sb.append("null");
    } else {
      Json.quote(sb, s);
    }
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
