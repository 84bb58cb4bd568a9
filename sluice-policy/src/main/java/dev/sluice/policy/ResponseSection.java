package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.TEXT;
import static dev.sluice.policy.Values.integer;
import static dev.sluice.policy.Values.quote;

import dev.sluice.core.InvalidValueException;
import dev.sluice.core.http.ResponseSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The {@code response:} section: the 429 and 503 pages, and which limit headers are sent. The
 * status rule is core's ({@link ResponseSpec.Builder#unavailableStatus}).
 */
final class ResponseSection {

  private static final String JSON_EXPECTED = "a JSON object with placeholders like "
      + "{{retryAfter}} written bare, e.g. '{\"error\":\"slow down\",\"retryAfter\":{{retryAfter}}}'";

  private static final Field<ResponseSettings, Boolean> RATE_LIMIT_HEADERS = Field.of(
      "rateLimitHeaders", "true or false", BOOLEAN, ResponseSettings::rateLimitHeaders);
  private static final Field<ResponseSettings, Boolean> IETF = Field.of("ietfHeaders",
      "true or false", BOOLEAN, ResponseSettings::ietfHeaders);
  private static final Field<ResponseSettings, String> HTML = Field.of("htmlTemplate",
      "a path to an HTML file", TEXT, ResponseSettings::htmlTemplatePath);
  private static final Field<ResponseSettings, Integer> UNAVAILABLE = Field.of(
      "unavailableStatus", "429 or 500..599", text -> {
        int v;
        try {
          v = integer(0, 999).parse(text);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("429 or 500..599");
        }
        ResponseSpec.newBuilder().unavailableStatus(v);
        return v;
      }, ResponseSettings::unavailableStatus);
  private static final Field<ResponseSettings, String> UNAVAILABLE_HTML = Field.of(
      "unavailableHtmlTemplate", "a path to an HTML file", TEXT,
      ResponseSettings::unavailableHtmlTemplatePath);
  private static final Field<ResponseSettings, String> JSON = Field.of("jsonTemplate",
      JSON_EXPECTED, text -> {
        ResponseSpec.newBuilder().jsonTemplate(text);
        return text;
      }, ResponseSettings::jsonTemplate);
  private static final Field<ResponseSettings, String> UNAVAILABLE_JSON = Field.of(
      "unavailableJsonTemplate", JSON_EXPECTED, text -> {
        ResponseSpec.newBuilder().unavailableJsonTemplate(text);
        return text;
      }, ResponseSettings::unavailableJsonTemplate);
  private static final Field<ResponseSettings, Long> STATUS = Field.of("status",
      "an HTTP status 400..599 for a limit's refusals (429 unless set; nginx's "
          + "limit_req_status)", Values.wholeNumber(400, 599), r -> (long) r.status(),
      v -> v == ResponseSpec.DEFAULT_REFUSAL_STATUS ? null : v);
  private static final Fields<ResponseSettings> FIELDS = new Fields<>(RATE_LIMIT_HEADERS, IETF,
      HTML, UNAVAILABLE, UNAVAILABLE_HTML, JSON, UNAVAILABLE_JSON, STATUS);

  static final List<String> KEYS = FIELDS.keys();

  private ResponseSection() {}

  static ResponseSettings read(Walk walk, Mapping doc) {
    ResponseSettings d = ResponseSettings.defaults();
    Mapping o = doc.section("response", KEYS, "a mapping");
    if (o == null) {
      return d;
    }
    Fields<ResponseSettings>.Row r = FIELDS.read(o, d);
    String template = template(walk, o, "htmlTemplate", r.get(HTML));
    String unavailableTemplate = template(walk, o, "unavailableHtmlTemplate",
        r.get(UNAVAILABLE_HTML));
    return new ResponseSettings(r.get(RATE_LIMIT_HEADERS), r.get(IETF), template,
        r.get(UNAVAILABLE), unavailableTemplate, r.get(HTML), r.get(UNAVAILABLE_HTML),
        r.get(JSON), r.get(UNAVAILABLE_JSON), r.get(STATUS).intValue());
  }

  static Map<String, Object> render(ResponseSettings s) {
    return FIELDS.render(s);
  }

  /** The contents of the HTML file at {@code key}, relative to the policy file; null if none. */
  private static String template(Walk walk, Mapping o, String key, String path) {
    if (path == null) {
      return null;
    }
    Path p = Path.of(path);
    if (!p.isAbsolute() && walk.source != null
        && walk.source.toAbsolutePath().getParent() != null) {
      p = walk.source.toAbsolutePath().getParent().resolve(p);
    }
    String text;
    try {
      text = Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      walk.error(o.node(key), o.path(key), quote(path), "a readable UTF-8 file (looked at " + p
          + ")");
      return null;
    }
    try {
      ResponseSpec.newBuilder().htmlTemplate(text);
    } catch (InvalidValueException e) {
      walk.error(o.node(key), o.path(key), quote(path), "an HTML file of " + e.expected()
          + " characters");
      return null;
    }
    return text;
  }
}
