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

  static final List<String> KEYS = List.of("keyFile", "clearance", "solveWithin", "ipv4Prefix",
      "ipv6Prefix", "noscript", "noscriptWait", "status", "skip", "cookie", "secureCookie",
      "limit");
  static final List<String> LIMIT_KEYS = List.of("maxScore", "decay", "failureCost",
      "raiseEvery");
  static final String KEY_FILE_EXPECTED = "a file of base64 keys of at least 32 bytes, one per "
      + "line (make one with: head -c 32 /dev/urandom | base64)";

  private ChallengeSection() {}

  static void read(Walk walk, Mapping doc, Policy.Builder policy) {
    if (!doc.has("challenge")) {
      return;
    }
    Mapping m = doc.section("challenge", KEYS, "a mapping with keyFile, clearance, noscript...");
    if (m == null) {
      return;
    }
    Challenge.Builder b = Challenge.builder();
    // Empty (as ${VAR:-} gives when VAR is unset): no file, this process's random key.
    String file = m.get("keyFile", KEY_FILE_EXPECTED, text -> {
      if (text.length() > 1024) {
        throw new IllegalArgumentException(KEY_FILE_EXPECTED);
      }
      return text.strip();
    }, "");
    if (!file.isEmpty()) {
      keys(walk, m, file, b);
    }
    set(walk, m, "clearance", () -> b.clearance(m.get("clearance", "a duration from 1m to 30d, "
        + "like 1h", within(Duration.ofMinutes(1), Duration.ofDays(30)),
        Challenge.DEFAULT_CLEARANCE)));
    set(walk, m, "solveWithin", () -> b.solveWithin(m.get("solveWithin", "a duration from 10s "
        + "to 1h, like 5m", within(Duration.ofSeconds(10), Duration.ofHours(1)),
        Challenge.DEFAULT_SOLVE_WITHIN)));
    int v4 = m.get("ipv4Prefix", "a whole number 8..32", integer(8, 32), 24);
    int v6 = m.get("ipv6Prefix", "a whole number 16..128", integer(16, 128), 64);
    b.prefixes(v4, v6);
    String noscript = m.get("noscript", "refresh (the page reloads after noscriptWait and "
        + "passes) or refuse (it asks for JavaScript)", oneOf(List.of("refresh", "refuse")),
        "refresh");
    b.noscript(Challenge.NoScript.valueOf(noscript.toUpperCase(Locale.ROOT)));
    set(walk, m, "noscriptWait", () -> b.noscriptWait(m.get("noscriptWait", "a duration from "
        + "1s to 1m, like 5s", within(Duration.ofSeconds(1), Duration.ofMinutes(1)),
        Challenge.DEFAULT_NOSCRIPT_WAIT)));
    int status = m.get("status", "200..599 but 204, 205 and 304 (default 429)", text -> {
      int v = integer(200, 599).parse(text);
      Challenge.builder().status(v);
      return v;
    }, Challenge.DEFAULT_STATUS);
    b.status(status);
    List<String> skip = m.list("skip", "a path glob like /robots.txt or /.well-known/**",
        text -> {
          Challenge.builder().skip(List.of(text.trim()));
          return text.trim();
        }, Challenge.DEFAULT_SKIP);
    b.skip(skip);
    String cookie = m.get("cookie", "a cookie name: letters, digits or !#$%&'*+.^_`|~-", text -> {
      Challenge.builder().cookie(text.trim());
      return text.trim();
    }, Challenge.DEFAULT_COOKIE);
    b.cookie(cookie);
    b.secureCookie(m.get("secureCookie", "true or false", BOOLEAN, false));
    Mapping limit = Mapping.of(walk, m.node("limit"), m.path("limit"), LIMIT_KEYS,
        "a mapping with maxScore, decay, failureCost, raiseEvery");
    if (limit != null) {
      double max = limit.get("maxScore", "a number 2..1e9", text -> {
        double v = Values.POSITIVE_NUMBER.parse(text);
        if (v < 2 || v > 1e9) {
          throw new IllegalArgumentException("a number 2..1e9");
        }
        return v;
      }, Challenge.DEFAULT_MAX_SCORE);
      Duration decay = limit.get("decay", "a duration from 10ms to 1h, like 15s",
          within(Duration.ofMillis(10), Duration.ofHours(1)), Challenge.DEFAULT_DECAY);
      int failure = limit.get("failureCost", "a whole number 1..maxScore", integer(1, 1_000_000),
          Challenge.DEFAULT_FAILURE_COST);
      int raise = limit.get("raiseEvery", "a whole number 1..10000", integer(1, 10_000),
          Challenge.DEFAULT_RAISE_EVERY);
      try {
        b.limit(max, decay, failure, raise);
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
}
