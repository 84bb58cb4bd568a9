package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.integer;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;
import static dev.sluice.policy.Values.within;

import dev.sluice.core.policy.Challenge;
import dev.sluice.core.policy.Policy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Locale;

/**
 * The {@code challenge:} section: how rules whose {@code action} is {@code challenge} challenge
 * browsers (core's {@link Challenge}, which holds every rule and default). Its {@code keyFile}
 * holds the signing keys, one per line in base64 (at least 32 bytes each, {@code #} comments):
 * the first signs, every one verifies, so rotating is putting a new key first and removing the
 * old one once its clearances have expired. The file is read at load and at every reload. An
 * empty {@code keyFile} (as {@code ${VAR:-}} gives) is none: a random key of this process.
 */
final class ChallengeSection {

  static final String KEY_FILE_EXPECTED = "a file of base64 keys of at least 32 bytes, one per "
      + "line (make one with: head -c 32 /dev/urandom | base64)";

  // Empty (as ${VAR:-} gives when VAR is unset): no file, this process's random key.
  private static final Field<Challenge, String> KEY_FILE = Field.of("keyFile", KEY_FILE_EXPECTED,
      text -> {
        if (text.length() > 1024) {
          throw new IllegalArgumentException(KEY_FILE_EXPECTED);
        }
        return text.strip();
      }, Challenge::keySource);
  private static final Field<Challenge, Duration> CLEARANCE = Field.duration("clearance",
      "a duration from 1m to 30d, like 1h", within(Duration.ofMinutes(1), Duration.ofDays(30)),
      Challenge::clearance);
  private static final Field<Challenge, Duration> SOLVE_WITHIN = Field.duration("solveWithin",
      "a duration from 10s to 1h, like 5m", within(Duration.ofSeconds(10), Duration.ofHours(1)),
      Challenge::solveWithin);
  private static final Field<Challenge, Integer> CLEARANCE_REQUESTS = Field.of(
      "clearanceRequests", "a whole number 0..1000000 (0: the rule's own limit)",
      integer(0, 1_000_000), Challenge::clearanceRequests);
  private static final Field<Challenge, Integer> IPV4_PREFIX = Field.of("ipv4Prefix",
      "a whole number 8..32", integer(8, 32), Challenge::ipv4Prefix);
  private static final Field<Challenge, Integer> IPV6_PREFIX = Field.of("ipv6Prefix",
      "a whole number 16..128", integer(16, 128), Challenge::ipv6Prefix);
  private static final Field<Challenge, String> NOSCRIPT = Field.of("noscript",
      "refuse (the page asks for JavaScript) or refresh (it reloads after noscriptWait and "
          + "passes: a clearance for waiting)", oneOf(List.of("refresh", "refuse")),
      c -> c.noscript().name().toLowerCase(Locale.ROOT));
  private static final Field<Challenge, Duration> NOSCRIPT_WAIT = Field.duration("noscriptWait",
      "a duration from 1s to 1m, like 5s", within(Duration.ofSeconds(1), Duration.ofMinutes(1)),
      Challenge::noscriptWait);
  private static final Field<Challenge, Integer> STATUS = Field.of("status",
      "200..599 but 204, 205 and 304 (default 429)", text -> {
        int v = integer(200, 599).parse(text);
        Challenge.builder().status(v);
        return v;
      }, Challenge::status);
  private static final Field<Challenge, List<String>> SKIP = Field.list("skip",
      "a path glob like /robots.txt or /.well-known/**", text -> {
        Challenge.builder().skip(List.of(text.trim()));
        return text.trim();
      }, Challenge::skip);
  private static final Field<Challenge, String> COOKIE = Field.of("cookie",
      "a cookie name: letters, digits or !#$%&'*+.^_`|~-", text -> {
        Challenge.builder().cookie(text.trim());
        return text.trim();
      }, Challenge::cookie);
  private static final Field<Challenge, Boolean> SECURE_COOKIE = Field.of("secureCookie",
      "true or false", BOOLEAN, Challenge::secureCookie);

  private static final Field<Challenge, Double> MAX_SCORE = Field.of("maxScore",
      "a number 2..1e9", text -> {
        double v = Values.POSITIVE_NUMBER.parse(text);
        if (v < 2 || v > 1e9) {
          throw new IllegalArgumentException("a number 2..1e9");
        }
        return v;
      }, Challenge::maxScore);
  private static final Field<Challenge, Duration> DECAY = Field.duration("decay",
      "a duration from 10ms to 1h, like 15s", within(Duration.ofMillis(10), Duration.ofHours(1)),
      Challenge::decay);
  private static final Field<Challenge, Integer> FAILURE_COST = Field.of("failureCost",
      "a whole number 1..maxScore", integer(1, 1_000_000), Challenge::failureCost);
  private static final Field<Challenge, Integer> RAISE_EVERY = Field.of("raiseEvery",
      "a whole number 1..10000", integer(1, 10_000), Challenge::raiseEvery);
  /** The {@code limit:} mapping: the challenge's own limit, core's score per address. */
  private static final Fields<Challenge> LIMIT = new Fields<>(MAX_SCORE, DECAY, FAILURE_COST,
      RAISE_EVERY);

  private static final Field<Challenge, Challenge> LIMIT_FIELD = Field.readBySection("limit",
      c -> c, LIMIT::render);
  private static final Fields<Challenge> FIELDS = new Fields<>(KEY_FILE, CLEARANCE,
      CLEARANCE_REQUESTS, SOLVE_WITHIN, IPV4_PREFIX, IPV6_PREFIX, NOSCRIPT, NOSCRIPT_WAIT, STATUS,
      SKIP, COOKIE, SECURE_COOKIE, LIMIT_FIELD);

  static final List<String> KEYS = FIELDS.keys();
  static final List<String> LIMIT_KEYS = LIMIT.keys();

  private ChallengeSection() {}

  static void read(Walk walk, Mapping doc, Policy.Builder policy) {
    if (!doc.has("challenge")) {
      return;
    }
    Mapping m = doc.section("challenge", KEYS, "a mapping with keyFile, clearance, noscript...");
    if (m == null) {
      return;
    }
    Challenge d = Challenge.defaults();
    Fields<Challenge>.Row r = FIELDS.read(m, d);
    Challenge.Builder b = Challenge.builder();
    String file = r.get(KEY_FILE);
    if (file != null && !file.isEmpty()) {
      keys(walk, m, file, b);
    }
    set(walk, m, "clearance", () -> b.clearance(r.get(CLEARANCE)));
    set(walk, m, "clearanceRequests", () -> b.clearanceRequests(r.get(CLEARANCE_REQUESTS)));
    set(walk, m, "solveWithin", () -> b.solveWithin(r.get(SOLVE_WITHIN)));
    b.prefixes(r.get(IPV4_PREFIX), r.get(IPV6_PREFIX));
    b.noscript(Challenge.NoScript.valueOf(r.get(NOSCRIPT).toUpperCase(Locale.ROOT)));
    set(walk, m, "noscriptWait", () -> b.noscriptWait(r.get(NOSCRIPT_WAIT)));
    b.status(r.get(STATUS));
    b.skip(r.get(SKIP));
    b.cookie(r.get(COOKIE));
    b.secureCookie(r.get(SECURE_COOKIE));
    Mapping limit = Mapping.of(walk, m.node("limit"), m.path("limit"), LIMIT_KEYS,
        "a mapping with maxScore, decay, failureCost, raiseEvery");
    if (limit != null) {
      Fields<Challenge>.Row l = LIMIT.read(limit, d);
      try {
        b.limit(l.get(MAX_SCORE), l.get(DECAY), l.get(FAILURE_COST), l.get(RAISE_EVERY));
      } catch (IllegalArgumentException e) {
        walk.coreError(limit.node, limit.path, e, limit);
      }
    }
    try {
      policy.challenge(b.build());
    } catch (IllegalArgumentException e) {
      walk.coreError(m.node, m.path, e, m);
    }
  }

  private static void set(Walk walk, Mapping m, String key, Runnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException e) {
      walk.coreError(m.node(key), m.path(key), e, m);
    }
  }

  /** Reads the key file at {@code path} (relative to the policy file) into {@code b}. */
  private static void keys(Walk walk, Mapping m, String path, Challenge.Builder b) {
    Path p = Path.of(path.trim());
    if (!p.isAbsolute() && walk.source != null
        && walk.source.toAbsolutePath().getParent() != null) {
      p = walk.source.toAbsolutePath().getParent().resolve(p).normalize();
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(p, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      walk.error(m.node("keyFile"), m.path("keyFile"), quote(path), "a readable file (looked "
          + "at " + p + ")");
      return;
    }
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      byte[] key = decode(line);
      if (key == null || key.length < 32) {
        walk.error(m.node("keyFile"), m.path("keyFile"), quote(path) + " line " + (i + 1)
            + (key == null ? ": not base64" : ": " + key.length + " bytes"),
            "a key of at least 32 bytes in base64 per line");
        return;
      }
      keys.add(key);
    }
    if (keys.isEmpty()) {
      walk.error(m.node("keyFile"), m.path("keyFile"), quote(path) + ": no key",
          KEY_FILE_EXPECTED);
      return;
    }
    try {
      b.keys(keys, p.toString());
    } catch (IllegalArgumentException e) {
      walk.error(m.node("keyFile"), m.path("keyFile"), quote(path), e.getMessage());
    }
  }

  /** Standard or URL-safe base64, padding optional; null when it is neither. */
  private static byte[] decode(String text) {
    String s = text.replace('-', '+').replace('_', '/');
    try {
      return Base64.getDecoder().decode(s.length() % 4 == 0 ? s
          : s + "=".repeat(4 - s.length() % 4));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  static Map<String, Object> render(Challenge c) {
    return FIELDS.render(c);
  }
}
