package dev.sluice.gateway;

import dev.sluice.core.http.JsonScan;
import dev.sluice.core.policy.HumanCheck;
import dev.sluice.core.policy.HumanVerifier;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The {@code siteverify} client Turnstile, hCaptcha and reCAPTCHA share: a form POST of
 * {@code secret}, {@code response} and {@code remoteip}, answered with
 * {@code {"success":true,"challenge_ts":"...","hostname":"...","action":"...","error-codes":[]}}
 * ({@code score} for reCAPTCHA v3), judged by {@link HumanCheck#judge}. Asynchronous (the JDK's
 * HTTP client, on its own threads), so no event loop waits; the admission step holds the deadline.
 * A status other than 200, or a body that is not such an object, is an error (the check's
 * {@code onError} decides), never a pass.
 */
public final class SiteVerify implements HumanVerifier {

  /** Answers past this are not read: siteverify's are a few hundred bytes. */
  static final int MAX_ANSWER_CHARS = 16 * 1024;

  private final Clock clock;
  /** Made on first use: a client owns a selector thread, which a gateway without checks lacks. */
  private volatile HttpClient client;

  public SiteVerify(Clock clock) {
    this.clock = clock;
  }

  private HttpClient client() {
    HttpClient c = client;
    if (c == null) {
      synchronized (this) {
        c = client;
        if (c == null) {
          c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
              .followRedirects(HttpClient.Redirect.NEVER).build();
          client = c;
        }
      }
    }
    return c;
  }

  @Override
  public CompletionStage<HumanCheck.Verification> verify(HumanCheck check, String token,
      String remoteIp) {
    StringBuilder form = new StringBuilder(token.length() + 128)
        .append("secret=").append(URLEncoder.encode(check.secret(), StandardCharsets.UTF_8))
        .append("&response=").append(URLEncoder.encode(token, StandardCharsets.UTF_8));
    if (remoteIp != null) {
      form.append("&remoteip=").append(URLEncoder.encode(remoteIp, StandardCharsets.UTF_8));
    }
    HttpRequest request = HttpRequest.newBuilder(check.verifyUrl())
        .timeout(check.deadline())
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(form.toString()))
        .build();
    try {
      return client().sendAsync(request, HttpResponse.BodyHandlers.ofString())
          .thenApply(r -> answer(check, r.statusCode(), r.body()));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The verdict on one answer of the service. */
  HumanCheck.Verification answer(HumanCheck check, int status, String body) {
    if (status != 200) {
      return HumanCheck.Verification.error("siteverify answered " + status);
    }
    if (body == null || body.length() > MAX_ANSWER_CHARS) {
      return HumanCheck.Verification.error("siteverify's answer is too long");
    }
    Answer a = Answer.parse(body);
    if (a == null || a.success == null) {
      return HumanCheck.Verification.error("siteverify's answer is not a verdict");
    }
    Instant ts = null;
    if (a.challengeTs != null) {
      try {
        ts = OffsetDateTime.parse(a.challengeTs).toInstant();
      } catch (DateTimeParseException e) {
        ts = null;
      }
    }
    return check.judge(a.success, a.hostname, a.action, ts, a.score, a.errorCodes,
        clock.instant());
  }

  /** The fields of a siteverify answer that a verdict reads. */
  static final class Answer {
    Boolean success;
    String challengeTs;
    String hostname;
    String action;
    double score = Double.NaN;
    final List<String> errorCodes = new ArrayList<>();

    /** The answer's fields, or null when it is not a JSON object. */
    static Answer parse(String s) {
      Answer a = new Answer();
      StringBuilder value = new StringBuilder(32);
      return JsonScan.members(s, 64, (key, i) -> a.member(s, key.toString(), i, value)) < 0
          ? null : a;
    }

    /** Reads the member {@code k} whose value starts at {@code i}; the index after it, or -1. */
    private int member(String s, String k, int i, StringBuilder value) {
      int n = s.length();
      if (s.charAt(i) == '"') {
        value.setLength(0);
        i = JsonScan.readString(s, i, value, 1024);
        switch (k) {
          case "challenge_ts" -> challengeTs = value.toString();
          case "hostname" -> hostname = value.toString();
          case "action" -> action = value.toString();
          default -> { }
        }
        return i;
      }
      if (k.equals("error-codes") && s.charAt(i) == '[') {
        i = JsonScan.skipWs(s, i + 1);
        while (i > 0 && i < n && s.charAt(i) == '"') {
          value.setLength(0);
          i = JsonScan.readString(s, i, value, 128);
          if (i < 0) {
            return -1;
          }
          errorCodes.add(value.toString());
          i = JsonScan.skipWs(s, i);
          if (i < n && s.charAt(i) == ',') {
            i = JsonScan.skipWs(s, i + 1);
          }
        }
        return i < 0 || i >= n || s.charAt(i) != ']' ? -1 : i + 1;
      }
      int start = i;
      i = JsonScan.skipValue(s, i);
      if (i < 0) {
        return -1;
      }
      String literal = s.substring(start, i);
      if (k.equals("success")) {
        success = literal.equals("true") ? Boolean.TRUE
            : literal.equals("false") ? Boolean.FALSE : null;
      } else if (k.equals("score")) {
        try {
          score = Double.parseDouble(literal);
        } catch (NumberFormatException e) {
          return -1;
        }
      }
      return i;
    }
  }
}
