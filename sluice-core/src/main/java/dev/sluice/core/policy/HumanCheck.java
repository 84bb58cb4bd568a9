package dev.sluice.core.policy;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import dev.sluice.core.http.JsonScan;
import dev.sluice.core.internal.Checks;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * A human check (Cloudflare Turnstile, hCaptcha, reCAPTCHA: all three speak {@code siteverify})
 * verified by the gateway in the very request it protects, so the verdict is never an answer of
 * its own that a script could skip or replay (seed 001: "a script that calls the auth provider
 * directly skips Turnstile"). A route names it with {@code humanCheck}; the admission step then
 * says {@link Admission.Action#VERIFY}, the adapter reads the token ({@link #token(RequestView)}
 * from a header, or {@link #token(CharSequence)} from a form or JSON body) and hands it to
 * {@link Admission#verify}, which:
 *
 * <ol>
 *   <li>counts the verification against the check's own {@link #limit()} (seed 001: 30 per
 *       60 s per IP; past it, the limit's 429) and remembers the token's SHA-256 in the store for
 *       {@link #maxAge()} ({@link #seen()}): a token seen before is refused as replayed, on every
 *       instance sharing the store, without asking the verifier;
 *   <li>asks the verifier ({@link HumanVerifier}: {@code secret}, {@code response}, {@code
 *       remoteip} the resolved client) within {@link #deadline()}; the answer must be a success
 *       for {@link #hostname()} and {@link #action()} (when set) with a {@code challenge_ts} no
 *       older than {@link #maxAge()} ({@link #judge});
 *   <li>forwards the request, or answers 403; when the verifier cannot answer in time,
 *       {@link #onError()} decides, as a rule's {@code onStoreError} does.
 * </ol>
 *
 * <p>Immutable. The secret is kept here and never shown ({@link #toString()} leaves it out).
 */
public final class HumanCheck {

  /** The siteverify services, with their default address and token field. */
  public enum Provider {
    TURNSTILE("https://challenges.cloudflare.com/turnstile/v0/siteverify", "cf-turnstile-response"),
    HCAPTCHA("https://api.hcaptcha.com/siteverify", "h-captcha-response"),
    RECAPTCHA("https://www.google.com/recaptcha/api/siteverify", "g-recaptcha-response");

    private final URI verifyUrl;
    private final String field;

    Provider(String verifyUrl, String field) {
      this.verifyUrl = URI.create(verifyUrl);
      this.field = field;
    }

    public URI verifyUrl() {
      return verifyUrl;
    }

    /** The form field its widget posts the token in. */
    public String field() {
      return field;
    }

    /** The name in policy files: {@code turnstile}, {@code hcaptcha}, {@code recaptcha}. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Where the token is read. */
  public enum TokenFrom {
    /** A request header (read with the head: the body streams on once verified). */
    HEADER,
    /** A field of an {@code application/x-www-form-urlencoded} body (what the widget posts). */
    FORM,
    /** A top-level string field of a JSON object body. */
    JSON
  }

  /** What a verification came to. */
  public enum Result { PASSED, FAILED, ERROR }

  /**
   * A verifier's answer: {@code reason} says why it failed ({@code invalid-input-response},
   * {@code hostname}, {@code action}, {@code stale}, {@code score}) or what went wrong.
   */
  public record Verification(Result result, String reason) {
    public static Verification passed() {
      return new Verification(Result.PASSED, null);
    }

    public static Verification failed(String reason) {
      return new Verification(Result.FAILED, reason);
    }

    public static Verification error(String reason) {
      return new Verification(Result.ERROR, reason);
    }
  }

  /** The longest token read: Turnstile's are at most 2,048 characters. */
  public static final int MAX_TOKEN_CHARS = 4096;
  /** Turnstile's tokens are valid for 300 s: the default of {@link #maxAge()}. */
  public static final Duration DEFAULT_MAX_AGE = Duration.ofSeconds(300);
  public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(3);
  public static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;
  /** The key dimension of {@link #seen()}: a token's SHA-256, in hex. */
  public static final String TOKEN_DIMENSION = "token";

  private final String name;
  private final Provider provider;
  private final URI verifyUrl;
  private final String secret;
  private final String secretSource;
  private final TokenFrom from;
  private final String field;
  private final String hostname;
  private final String action;
  private final Duration maxAge;
  private final Duration deadline;
  private final OnStoreError onError;
  private final double minScore;
  private final int maxBodyBytes;
  private final Rule limit;
  private final Rule seen;
  private final Rule unavailable;
  private final List<Rule> rules;

  private HumanCheck(Builder b) {
    this.name = b.name;
    this.provider = b.provider;
    this.verifyUrl = b.verifyUrl != null ? b.verifyUrl : b.provider.verifyUrl();
    this.secret = b.secret;
    this.secretSource = b.secretSource;
    this.from = b.from;
    this.field = b.field != null ? b.field : b.provider.field();
    this.hostname = b.hostname;
    this.action = b.action;
    this.maxAge = b.maxAge;
    this.deadline = b.deadline;
    this.onError = b.onError;
    this.minScore = b.minScore;
    this.maxBodyBytes = b.maxBodyBytes;
    Rule.Builder lb = Rule.builder("humanCheck:" + name).key(b.key).onStoreError(b.onError);
    b.limits.forEach(lb::limit);
    this.limit = lb.build();
    // One use per token for maxAge: a bucket of one token that comes back after maxAge, which a
    // store keeps exactly that long (the time it takes to become fresh), then forgets.
    this.seen = Rule.builder("humanCheck:" + name + ":seen").key(TOKEN_DIMENSION)
        .onStoreError(b.onError)
        .limit(Limit.tokenBucket("seen", 1, 1, maxAge)).build();
    this.rules = List.of(limit, seen);
    this.unavailable = limit.toBuilder().onStoreError(OnStoreError.DENY).build();
  }

  public static Builder builder(String name, Provider provider) {
    return new Builder(name, provider);
  }

  public String name() {
    return name;
  }

  public Provider provider() {
    return provider;
  }

  public URI verifyUrl() {
    return verifyUrl;
  }

  /** The site's secret, sent to the verifier; never logged. */
  public String secret() {
    return secret;
  }

  /** Where the secret came from (a file's path), shown in its place; null when not said. */
  public String secretSource() {
    return secretSource;
  }

  public TokenFrom from() {
    return from;
  }

  /** The header or field the token is read from. */
  public String field() {
    return field;
  }

  /** The host name the token must have been issued on, or null for any. */
  public String hostname() {
    return hostname;
  }

  /** The widget's action the token must carry, or null for any. */
  public String action() {
    return action;
  }

  public Duration maxAge() {
    return maxAge;
  }

  public Duration deadline() {
    return deadline;
  }

  /** What happens when the verifier does not answer in time: allow (degraded) or deny (503). */
  public OnStoreError onError() {
    return onError;
  }

  /** reCAPTCHA v3's least score (0..1), or NaN for none. */
  public double minScore() {
    return minScore;
  }

  /** The most body bytes gathered to find a form or JSON token; a larger body is a 413. */
  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  /** The check's own rate limit, counted per verification, named {@code humanCheck:<name>}. */
  public Rule limit() {
    return limit;
  }

  /** Tokens seen in the last {@link #maxAge()}, keyed by their SHA-256. */
  public Rule seen() {
    return seen;
  }

  /** The rule a 503 names when the check could not be made and fails closed. */
  Rule unavailable() {
    return unavailable;
  }

  /** {@link #limit()} and {@link #seen()}, checked as one step. */
  List<Rule> rules() {
    return rules;
  }

  /** The token in a header, for {@link TokenFrom#HEADER}; null when absent or too long. */
  public String token(RequestView request) {
    List<String> values = request.headers(field);
    if (values.size() != 1) {
      return null;   // none, or two: which one would the application read?
    }
    return usable(values.get(0).strip());
  }

  /**
   * The token in a body, for {@link TokenFrom#FORM} and {@link TokenFrom#JSON}; null when it is
   * absent, empty, too long, or there twice (an application might read the other one).
   */
  public String token(CharSequence body) {
    return from == TokenFrom.JSON ? jsonField(body, field) : formField(body, field);
  }

  private static String usable(String token) {
    return token == null || token.isEmpty() || token.length() > MAX_TOKEN_CHARS ? null : token;
  }

  static String formField(CharSequence body, String field) {
    String found = null;
    int n = body.length();
    int start = 0;
    while (start <= n) {
      int amp = indexOf(body, '&', start);
      int end = amp < 0 ? n : amp;
      int eq = indexOf(body, '=', start);
      int nameEnd = eq >= 0 && eq < end ? eq : end;
      String name;
      try {
        name = URLDecoder.decode(body.subSequence(start, nameEnd).toString(),
            StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return null;
      }
      if (name.equals(field)) {
        if (found != null) {
          return null;
        }
        if (end - nameEnd - 1 > MAX_TOKEN_CHARS * 3) {
          return null;
        }
        try {
          found = nameEnd < end ? URLDecoder.decode(body.subSequence(nameEnd + 1, end)
              .toString(), StandardCharsets.UTF_8) : "";
        } catch (IllegalArgumentException e) {
          return null;
        }
      }
      if (amp < 0) {
        break;
      }
      start = amp + 1;
    }
    return usable(found);
  }

  private static int indexOf(CharSequence s, char c, int from) {
    for (int i = from; i < s.length(); i++) {
      if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  /** A top-level string field of a JSON object: the one value, or null (absent, twice, bad). */
  static String jsonField(CharSequence s, String field) {
    String[] found = new String[1];
    boolean[] twice = new boolean[1];
    int end = JsonScan.members(s, 256, (key, i) -> {
      if (!field.contentEquals(key)) {
        return JsonScan.skipValue(s, i);
      }
      if (found[0] != null || s.charAt(i) != '"') {
        twice[0] = true;
        return -1;
      }
      StringBuilder value = new StringBuilder(64);
      int next = JsonScan.readString(s, i, value, MAX_TOKEN_CHARS + 1);
      found[0] = value.toString();
      return next;
    });
    return end < 0 || twice[0] ? null : usable(found[0]);
  }

  /** {@code identity} with the token's SHA-256 (hex) as {@link #TOKEN_DIMENSION}. */
  static Identity withToken(Identity identity, String token) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(token.getBytes(StandardCharsets.UTF_8));
      return identity.with(TOKEN_DIMENSION, HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * The verdict on a siteverify answer: a success, for this check's host name and action, issued
   * within {@link #maxAge()} of {@code now}, with at least {@link #minScore()} when set.
   *
   * @param challengeTs when the challenge was solved, or null when the answer has none
   * @param score reCAPTCHA v3's score, or NaN
   * @param errorCodes the answer's {@code error-codes}, for the reason of a failure
   */
  public Verification judge(boolean success, String answeredHostname, String answeredAction,
      Instant challengeTs, double score, List<String> errorCodes, Instant now) {
    if (!success) {
      return Verification.failed(errorCodes == null || errorCodes.isEmpty() ? "not-success"
          : String.join(",", errorCodes));
    }
    if (hostname != null && !hostname.equalsIgnoreCase(answeredHostname)) {
      return Verification.failed("hostname");
    }
    if (action != null && !action.equals(answeredAction)) {
      return Verification.failed("action");
    }
    if (challengeTs == null || challengeTs.isAfter(now.plus(Duration.ofMinutes(1)))
        || Duration.between(challengeTs, now).compareTo(maxAge) > 0) {
      return Verification.failed("stale");
    }
    if (!Double.isNaN(minScore) && !(score >= minScore)) {
      return Verification.failed("score");
    }
    return Verification.passed();
  }

  @Override
  public String toString() {
    return "HumanCheck{" + name + ", " + provider.configName() + ", " + verifyUrl + ", token="
        + from.name().toLowerCase(Locale.ROOT) + ":" + field
        + (hostname != null ? ", hostname=" + hostname : "")
        + (action != null ? ", action=" + action : "") + ", maxAge=" + maxAge + ", deadline="
        + deadline + ", onError=" + onError + ", limit=" + limit.limits() + "}";
  }

  /** Builds a {@link HumanCheck}; each setter checks its value. */
  public static final class Builder {
    private final String name;
    private final Provider provider;
    private URI verifyUrl;
    private String secret;
    private String secretSource;
    private TokenFrom from = TokenFrom.FORM;
    private String field;
    private String hostname;
    private String action;
    private Duration maxAge = DEFAULT_MAX_AGE;
    private Duration deadline = DEFAULT_DEADLINE;
    private OnStoreError onError = OnStoreError.ALLOW;
    private double minScore = Double.NaN;
    private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    private String key = "ip";
    private final java.util.ArrayList<Limit> limits = new java.util.ArrayList<>();

    private Builder(String name, Provider provider) {
      this.name = Checks.name(name, "name");
      this.provider = Checks.notNull(provider, "provider");
    }

    /** Where siteverify is asked (default: the provider's); http(s) only. */
    public Builder verifyUrl(URI url) {
      Checks.notNull(url, "verifyUrl");
      if (!"https".equalsIgnoreCase(url.getScheme()) && !"http".equalsIgnoreCase(url.getScheme())
          || url.getHost() == null) {
        throw Checks.invalid("verifyUrl", url, "an http(s) URL like " + provider.verifyUrl());
      }
      this.verifyUrl = url;
      return this;
    }

    public Builder secret(String secret) {
      Checks.notNull(secret, "secret");
      if (secret.isBlank() || secret.length() > 1024 || !Checks.isPrintableAscii(secret)) {
        throw Checks.invalid("secret", secret.length() + " characters",
            "1..1024 printable ASCII characters (the site's secret key)");
      }
      this.secret = secret;
      return this;
    }

    /** Where the secret came from (a file's path), shown instead of it. */
    public Builder secretSource(String source) {
      this.secretSource = source;
      return this;
    }

    /** Where the token is read and under which name (null: the provider's form field). */
    public Builder token(TokenFrom from, String field) {
      this.from = Checks.notNull(from, "token");
      if (field != null) {
        Checks.name(field, "field");
      }
      this.field = field;
      return this;
    }

    public Builder hostname(String hostname) {
      this.hostname = hostname == null ? null : Checks.name(hostname, "hostname");
      return this;
    }

    public Builder action(String action) {
      this.action = action == null ? null : Checks.name(action, "action");
      return this;
    }

    public Builder maxAge(Duration maxAge) {
      Checks.duration(maxAge, "maxAge");
      this.maxAge = maxAge;
      return this;
    }

    public Builder deadline(Duration deadline) {
      Checks.duration(deadline, "deadline");
      if (deadline.compareTo(Duration.ofMinutes(1)) > 0) {
        throw Checks.invalid("deadline", deadline, "1ms..1m");
      }
      this.deadline = deadline;
      return this;
    }

    public Builder onError(OnStoreError onError) {
      this.onError = Checks.notNull(onError, "onError");
      return this;
    }

    public Builder minScore(double minScore) {
      if (!(minScore >= 0 && minScore <= 1)) {
        throw Checks.invalid("minScore", minScore, "0..1");
      }
      this.minScore = minScore;
      return this;
    }

    public Builder maxBodyBytes(int bytes) {
      if (bytes < 256 || bytes > 16 << 20) {
        throw Checks.invalid("maxBodyBytes", bytes, "256 bytes..16MiB");
      }
      this.maxBodyBytes = bytes;
      return this;
    }

    /** The key of the check's own limit (default {@code ip}). */
    public Builder key(String key) {
      Rule.builder("x").key(key).limit(Limit.fixedWindow("x", 1, Duration.ofSeconds(1)));
      this.key = key;
      return this;
    }

    /** Adds a limit of the check's own rate limit (default: 30 per 60 s, seed 001's). */
    public Builder limit(Limit limit) {
      limits.add(Checks.notNull(limit, "limit"));
      return this;
    }

    public HumanCheck build() {
      if (secret == null) {
        throw Checks.invalid("secret", null, "the site's secret key of human check '" + name
            + "'");
      }
      if (limits.isEmpty()) {
        limits.add(Limit.fixedWindow("verify", 30, Duration.ofSeconds(60)));
      }
      return new HumanCheck(this);
    }
  }
}
