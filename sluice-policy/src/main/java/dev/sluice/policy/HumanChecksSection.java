package dev.sluice.policy;

import static dev.sluice.policy.Values.NAME;
import static dev.sluice.policy.Values.TEXT;
import static dev.sluice.policy.Values.describe;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;
import static dev.sluice.policy.Values.within;

import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.policy.HumanCheck;
import dev.sluice.core.policy.Policy;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * The {@code humanChecks:} section: named human checks (Turnstile, hCaptcha, reCAPTCHA) that
 * routes demand with {@code humanCheck: NAME}. Each secret is read from a file (relative to the
 * policy file) when the policy loads, and never shown: the effective policy names the file.
 */
final class HumanChecksSection {

  // One table: a check's keys, their reading (each default is that of a check of the same
  // provider as core builds it) and the effective policy's rendering of core's HumanCheck.
  private static final Field<HumanCheck, String> PROVIDER = Field.readBySection("provider",
      h -> h.provider().configName());
  private static final Field<HumanCheck, String> SECRET_FILE = Field.readBySection("secretFile",
      h -> h.secretSource() == null ? "(set in code)" : h.secretSource());
  private static final Field<HumanCheck, String> TOKEN = Field.of("token", "form (a form field, "
      + "as the widget posts it), json (a top-level JSON field) or header",
      oneOf(List.of("form", "json", "header")), h -> lower(h.from()));
  private static final Field<HumanCheck, String> FIELD = Field.of("field",
      "a form field, JSON field or header name", NAME, HumanCheck::field);
  private static final Field<HumanCheck, String> HOSTNAME = Field.of("hostname",
      "the host name tokens must be issued on, like app.example.com", NAME, HumanCheck::hostname);
  private static final Field<HumanCheck, String> ACTION = Field.of("action",
      "the widget's action tokens must carry, like login", NAME, HumanCheck::action);
  private static final Field<HumanCheck, Duration> MAX_AGE = Field.duration("maxAge",
      "a duration like 300s (the token's life)", Values.POSITIVE_DURATION, HumanCheck::maxAge);
  private static final Field<HumanCheck, Duration> DEADLINE = Field.duration("deadline",
      "a duration in 1ms..1m, like 3s", within(Duration.ofMillis(1), Duration.ofMinutes(1)),
      HumanCheck::deadline);
  private static final Field<HumanCheck, String> ON_ERROR = Field.of("onError",
      "allow or deny (when the verifier does not answer in time)",
      oneOf(List.of("allow", "deny")), h -> lower(h.onError()));
  private static final Field<HumanCheck, Double> MIN_SCORE = Field.of("minScore",
      "a score in 0..1 (reCAPTCHA v3)", text -> {
        double v = Double.parseDouble(text);
        if (!(v >= 0 && v <= 1)) {
          throw new IllegalArgumentException("0..1");
        }
        return v;
      }, h -> Double.isNaN(h.minScore()) ? null : h.minScore());
  private static final Field<HumanCheck, Long> MAX_BODY_BYTES = Field.size("maxBodyBytes",
      "a size in 256..16MiB, like 64KiB", Values.size(256, 16 << 20),
      h -> (long) h.maxBodyBytes());
  /** Shown, and read as a default, only where it is not the provider's own. */
  private static final Field<HumanCheck, URI> VERIFY_URL = Field.of("verifyUrl",
      "an http(s) URL of a siteverify service", text -> {
        URI u = URI.create(text.strip());
        HumanCheck.builder("x", HumanCheck.Provider.TURNSTILE).verifyUrl(u);
        return u;
      }, h -> h.verifyUrl().equals(h.provider().verifyUrl()) ? null : h.verifyUrl(),
      URI::toString);
  private static final Field<HumanCheck, String> KEY = Field.of("key",
      "dimension names joined by ':', like ip", TEXT, h -> h.limit().key());
  private static final Field<HumanCheck, List<Limit>> LIMITS = Field.readBySection("limits",
      h -> h.limit().limits(), limits -> limits.stream().map(EffectivePolicy::limit).toList());
  private static final Fields<HumanCheck> FIELDS = new Fields<>(PROVIDER, SECRET_FILE, TOKEN,
      FIELD, HOSTNAME, ACTION, MAX_AGE, DEADLINE, ON_ERROR, MIN_SCORE, MAX_BODY_BYTES,
      VERIFY_URL, KEY, LIMITS);

  static final List<String> KEYS = FIELDS.keys();
  private static final List<String> PROVIDERS = Arrays.stream(HumanCheck.Provider.values())
      .map(HumanCheck.Provider::configName).toList();

  private HumanChecksSection() {}

  /** Adds each check to {@code policy}; returns every name the section declares. */
  static Set<String> read(Walk walk, Mapping doc, Set<String> dimensions, Policy.Builder policy) {
    Set<String> names = new LinkedHashSet<>();
    Mapping all = doc.section("humanChecks", null, "a mapping of human check names to checks, "
        + "like turnstile: {secretFile: turnstile.key}");
    if (all == null) {
      return names;
    }
    for (Map.Entry<String, NodeTuple> e : all.fields.entrySet()) {
      String name = e.getKey();
      names.add(name);
      Mapping h = Mapping.of(walk, e.getValue().getValueNode(), all.path(name), KEYS,
          "a mapping with provider, secretFile, token, hostname, action");
      if (h == null) {
        continue;
      }
      int before = walk.errors.size();
      String dflt = PROVIDERS.contains(name) ? name : null;
      String provider = dflt != null
          ? h.get("provider", "one of " + PROVIDERS, oneOf(PROVIDERS), dflt)
          : h.required("provider", "one of " + PROVIDERS + " (the name is none of them)",
              oneOf(PROVIDERS));
      if (provider == null) {
        continue;
      }
      HumanCheck.Builder b;
      HumanCheck defaults;
      try {
        HumanCheck.Provider p = HumanCheck.Provider.valueOf(provider.toUpperCase(Locale.ROOT));
        b = HumanCheck.builder(name, p);
        defaults = HumanCheck.builder(name, p).secret("-").build();
      } catch (IllegalArgumentException ex) {
        walk.error(e.getValue().getKeyNode(), all.path(name), quote(name),
            Walk.expectation(ex, "a human check name"));
        continue;
      }
      String file = h.required("secretFile", "a file holding the site's secret key, relative to "
          + "the policy file", TEXT);
      String secret = file == null ? null : secret(walk, h, file);
      Fields<HumanCheck>.Row row = FIELDS.read(h, defaults);
      String key = row.get(KEY);
      for (String dim : key.split(":")) {
        if (!dimensions.contains(dim)) {
          walk.error(h.node("key"), h.path("key"), quote(key),
              "dimensions declared under dimensions:, one of " + dimensions);
          break;
        }
      }
      if (walk.errors.size() > before || secret == null) {
        continue;
      }
      try {
        b.secret(secret).secretSource(file)
            .token(HumanCheck.TokenFrom.valueOf(row.get(TOKEN).toUpperCase(Locale.ROOT)),
                row.get(FIELD))
            .hostname(row.get(HOSTNAME)).action(row.get(ACTION)).maxAge(row.get(MAX_AGE))
            .deadline(row.get(DEADLINE))
            .onError(OnStoreError.valueOf(row.get(ON_ERROR).toUpperCase(Locale.ROOT)))
            .maxBodyBytes(row.get(MAX_BODY_BYTES).intValue()).key(key);
        if (row.get(MIN_SCORE) != null) {
          b.minScore(row.get(MIN_SCORE));
        }
        if (row.get(VERIFY_URL) != null) {
          b.verifyUrl(row.get(VERIFY_URL));
        }
        limits(walk, h, name, b);
        if (walk.errors.size() == before) {
          policy.humanCheck(b.build());
        }
      } catch (IllegalArgumentException ex) {
        walk.coreError(h.node, all.path(name), ex, h);
      }
    }
    return names;
  }

  /** The check's own rate limit: limits exactly as under rules: (default 30 per 60 s per key). */
  private static void limits(Walk walk, Mapping h, String name, HumanCheck.Builder b) {
    Node n = h.node("limits");
    if (n == null) {
      return;
    }
    if (!(n instanceof SequenceNode seq) || seq.getValue().isEmpty()) {
      walk.error(n, h.path("limits"), describe(n), "a list of limits as under rules:, like "
          + "[{type: fixed-window, limit: 30, window: 60s}]");
      return;
    }
    int i = 0;
    for (Node ln : seq.getValue()) {
      Limit l = RulesSection.limitOf(walk, ln, h.path("limits") + "[" + i++ + "]",
          "verify", seq.getValue().size());
      if (l != null) {
        b.limit(l);
      }
    }
  }

  /** The secret: the file's text without surrounding whitespace; null after an error. */
  private static String secret(Walk walk, Mapping h, String file) {
    Path p = Path.of(file);
    if (!p.isAbsolute() && walk.source != null
        && walk.source.toAbsolutePath().getParent() != null) {
      p = walk.source.toAbsolutePath().getParent().resolve(p);
    }
    String text;
    try {
      text = Files.readString(p, StandardCharsets.UTF_8).strip();
    } catch (IOException | RuntimeException e) {
      walk.error(h.node("secretFile"), h.path("secretFile"), quote(file),
          "a readable file holding the secret key (looked at " + p + ")");
      return null;
    }
    if (text.isEmpty() || text.length() > 1024 || !text.chars().allMatch(c -> c > ' ' && c < 127)) {
      walk.error(h.node("secretFile"), h.path("secretFile"), quote(file),
          "a file holding the secret key: 1..1024 printable ASCII characters (it holds "
              + text.length() + " characters)");
      return null;
    }
    return text;
  }

  /** A human check as the effective policy shows it: its secret's file, never the secret. */
  static Map<String, Object> render(HumanCheck h) {
    return FIELDS.render(h);
  }

  private static String lower(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  /** The declared names, for messages. */
  static String list(Set<String> names) {
    return names.isEmpty() ? "[] (no humanChecks: section)" : names.toString();
  }
}
