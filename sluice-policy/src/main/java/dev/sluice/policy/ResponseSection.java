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

/**
 * The {@code response:} section: the 429 and 503 pages, and which limit headers are sent. The
 * status rule is core's ({@link ResponseSpec.Builder#unavailableStatus}).
 */
final class ResponseSection {

  static final List<String> KEYS = List.of("rateLimitHeaders", "ietfHeaders", "htmlTemplate",
      "unavailableStatus", "unavailableHtmlTemplate", "jsonTemplate", "unavailableJsonTemplate",
      "status");

  private static final String JSON_EXPECTED = "a JSON object with placeholders like "
      + "{{retryAfter}} written bare, e.g. '{\"error\":\"slow down\",\"retryAfter\":{{retryAfter}}}'";

  private ResponseSection() {}

  static ResponseSettings read(Walk walk, Mapping doc) {
    ResponseSettings d = ResponseSettings.defaults();
    Mapping o = doc.section("response", KEYS, "a mapping");
    if (o == null) {
      return d;
    }
    boolean rl = o.get("rateLimitHeaders", "true or false", BOOLEAN, d.rateLimitHeaders());
    boolean ietf = o.get("ietfHeaders", "true or false", BOOLEAN, d.ietfHeaders());
    String templatePath = o.get("htmlTemplate", "a path to an HTML file", TEXT, null);
    String template = template(walk, o, "htmlTemplate", templatePath);
    int unavailable = o.get("unavailableStatus", "429 or 500..599", text -> {
      int v;
      try {
        v = integer(0, 999).parse(text);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("429 or 500..599");
      }
      ResponseSpec.newBuilder().unavailableStatus(v);
      return v;
    }, d.unavailableStatus());
    String unavailablePath = o.get("unavailableHtmlTemplate", "a path to an HTML file", TEXT,
        null);
    String unavailableTemplate = template(walk, o, "unavailableHtmlTemplate", unavailablePath);
    String json = o.get("jsonTemplate", JSON_EXPECTED, text -> {
      ResponseSpec.newBuilder().jsonTemplate(text);
      return text;
    }, null);
    String unavailableJson = o.get("unavailableJsonTemplate", JSON_EXPECTED, text -> {
      ResponseSpec.newBuilder().unavailableJsonTemplate(text);
      return text;
    }, null);
    long status = o.get("status", "an HTTP status 400..599 for a limit's refusals (429 unless "
        + "set; nginx's limit_req_status)", Values.wholeNumber(400, 599), (long) d.status());
    return new ResponseSettings(rl, ietf, template, unavailable, unavailableTemplate,
        templatePath, unavailablePath, json, unavailableJson, (int) status);
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
