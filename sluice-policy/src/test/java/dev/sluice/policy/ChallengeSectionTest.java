package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Challenge;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A rule's {@code action}, and the {@code challenge:} section with its key file. */
class ChallengeSectionTest {

  static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";   // 32 bytes
  static final String OLD_KEY = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA";   // url-safe, unpadded

  static String rules(String extra) {
    return String.join("\n",
        "rules:",
        "  pages:",
        "    limits: [{type: sliding-window, limit: 100, window: 1m}]",
        extra,
        "  noisy:",
        "    limits: [{type: fixed-window, limit: 10, window: 1m}]",
        "    action: log",
        "routes:",
        "  - {paths: [/**], rules: [pages, noisy]}",
        "");
  }

  @TempDir
  Path dir;

  LoadedPolicy load(String yaml) throws ConfigException {
    return PolicyLoader.parse(yaml, dir.resolve("p.yaml").toString(), dir.resolve("p.yaml"),
        Map.of());
  }

  List<String> errors(String yaml) {
    try {
      load(yaml);
    } catch (ConfigException e) {
      return e.errors().stream().map(ConfigError::toString)
          .map(s -> s.replace(dir.toString(), "DIR")).toList();
    }
    throw new AssertionError("expected the policy to be rejected");
  }

  @Test
  void actions_andDifficulty_areRead_andLogRunsInShadowMode() throws Exception {
    LoadedPolicy p = load(rules("    action: challenge\n    difficulty: 12\n"
        + "    maxDifficulty: 18"));
    Rule pages = p.config().policy().rules().get("pages");
    assertThat(pages.action()).isEqualTo(Rule.Action.CHALLENGE);
    assertThat(pages.difficulty()).isEqualTo(12);
    assertThat(pages.maxDifficulty()).isEqualTo(18);
    Rule noisy = p.config().policy().rules().get("noisy");
    assertThat(noisy.action()).isEqualTo(Rule.Action.LOG);
    assertThat(noisy.mode()).isEqualTo(Mode.SHADOW);
    assertThat(p.config().policy().challenge()).as("no section: the defaults at run time")
        .isNull();
    @SuppressWarnings("unchecked")
    Map<String, Object> rendered = (Map<String, Object>) ((Map<String, Object>) p.effective()
        .get("rules")).get("pages");
    assertThat(rendered).containsEntry("action", "challenge").containsEntry("difficulty", 12)
        .containsEntry("maxDifficulty", 18);
  }

  @Test
  void section_withAKeyFileRelativeToThePolicy_loadsBackFromItsEffectiveForm() throws Exception {
    Files.writeString(dir.resolve("keys"), "# new key first, the old one for the overlap\n"
        + KEY + "\n\n" + OLD_KEY + "\n");
    String yaml = rules("    action: challenge") + String.join("\n",
        "challenge:",
        "  keyFile: keys",
        "  clearance: 2h",
        "  solveWithin: 2m",
        "  ipv4Prefix: 32",
        "  ipv6Prefix: 56",
        "  noscript: refuse",
        "  noscriptWait: 3s",
        "  status: 403",
        "  skip: [/robots.txt, /health/**]",
        "  cookie: clear",
        "  secureCookie: true",
        "  limit: {maxScore: 30, decay: 10s, failureCost: 5, raiseEvery: 3}",
        "");
    LoadedPolicy p = load(yaml);
    Challenge c = p.config().policy().challenge();
    assertThat(c.keyCount()).isEqualTo(2);
    assertThat(c.keySource()).isEqualTo(dir.resolve("keys").toString());
    assertThat(c.clearance()).isEqualTo(Duration.ofHours(2));
    assertThat(c.solveWithin()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.ipv4Prefix()).isEqualTo(32);
    assertThat(c.ipv6Prefix()).isEqualTo(56);
    assertThat(c.noscript()).isEqualTo(Challenge.NoScript.REFUSE);
    assertThat(c.noscriptWait()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.status()).isEqualTo(403);
    assertThat(c.skip()).containsExactly("/robots.txt", "/health/**");
    assertThat(c.cookie()).isEqualTo("clear");
    assertThat(c.secureCookie()).isTrue();
    assertThat(c.maxScore()).isEqualTo(30);
    assertThat(c.decay()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.failureCost()).isEqualTo(5);
    assertThat(c.raiseEvery()).isEqualTo(3);
    String effective = PolicyFormat.toYaml(p.effective());
    assertThat(effective).contains("keyFile: " + dir.resolve("keys")).doesNotContain(KEY);
    assertThat(load(effective).effective()).isEqualTo(p.effective());
  }

  @Test
  void badKeyFiles_andValues_nameTheFileLineFieldAndExpectation() throws Exception {
    Files.writeString(dir.resolve("short"), KEY + "\nc2hvcnQ=\n");
    Files.writeString(dir.resolve("empty"), "# nothing yet\n");
    Files.writeString(dir.resolve("garbage"), "not base64 at all!\n");
    String rule = rules("    action: challenge");
    assertThat(errors(rule + "challenge:\n  keyFile: missing\n")).containsExactly(
        "DIR/p.yaml:11: challenge.keyFile : \"missing\" (expected: a readable file (looked at "
            + "DIR/missing))");
    assertThat(errors(rule + "challenge:\n  keyFile: short\n")).containsExactly(
        "DIR/p.yaml:11: challenge.keyFile : \"short\" line 2: 5 bytes (expected: a key of at "
            + "least 32 bytes in base64 per line)");
    assertThat(errors(rule + "challenge:\n  keyFile: empty\n")).containsExactly(
        "DIR/p.yaml:11: challenge.keyFile : \"empty\": no key (expected: "
            + ChallengeSection.KEY_FILE_EXPECTED + ")");
    assertThat(errors(rule + "challenge:\n  keyFile: garbage\n")).containsExactly(
        "DIR/p.yaml:11: challenge.keyFile : \"garbage\" line 1: not base64 (expected: a key of "
            + "at least 32 bytes in base64 per line)");
    assertThat(errors(rule + "challenge:\n  status: 204\n  noscript: maybe\n  limit: "
        + "{maxScore: 4, failureCost: 9}\n  clearance: 10s\n")).containsExactly(
        "DIR/p.yaml:11: challenge.status : 204 (expected: 200..599 but 204, 205 and 304 (a "
            + "page is sent))",
        "DIR/p.yaml:12: challenge.noscript : \"maybe\" (expected: one of refresh, refuse)",
        "DIR/p.yaml:13: challenge.limit.failureCost : 9 (expected: 1..4 (at most maxScore))",
        "DIR/p.yaml:14: challenge.clearance : \"10s\" (expected: a duration in 1m..30d)");
    assertThat(errors(rules("    difficulty: 12"))).containsExactly(
        "DIR/p.yaml:4: rules.pages.difficulty : 12 (expected: no difficulty unless action: "
            + "challenge)");
    assertThat(errors(rules("    action: challenge\n    difficulty: 30"))).containsExactly(
        "DIR/p.yaml:5: rules.pages.difficulty : 30 (expected: a whole number 1..24 (leading "
            + "zero bits; each one doubles a browser's work))");
    assertThat(errors(rules("    action: challenge\n    difficulty: 12\n    maxDifficulty: 10")))
        .containsExactly("DIR/p.yaml:6: rules.pages.maxDifficulty : 10 (expected: 12..24 "
            + "(at least the difficulty))");
    assertThat(errors(rules("    action: block"))).containsExactly(
        "DIR/p.yaml:4: rules.pages.action : \"block\" (expected: one of refuse, challenge, log)");
    assertThat(errors(rules("    action: challenge\n    ban: 1m"))).containsExactly(
        "DIR/p.yaml:5: rules.pages.ban : \"1m\" (expected: no ban on a rule whose action is "
            + "challenge: a ban refuses whoever solves (rule 'pages'))");
  }
}
