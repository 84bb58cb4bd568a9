package dev.sluice.policy;

import static dev.sluice.policy.PolicyLoaderTest.errors;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import dev.sluice.core.StatusSet;
import dev.sluice.core.policy.HumanCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The policy keys of issue 22: rules counted on responses (countStatus, skip), cooldown and
 * concurrency limits, a refusal status, the deny list and human checks; each bad value is an
 * error at its line.
 */
class EscalationSectionsTest {

  @TempDir
  Path dir;

  private LoadedPolicy load(String yaml, Map<String, String> env) throws Exception {
    Path file = dir.resolve("p.yaml");
    Files.writeString(file, yaml);
    return PolicyLoader.load(file, env);
  }

  @Test
  void seed003_invites_areCooldownsCountingWrongCodes_withTheSeedsVariables() throws Exception {
    Path example = ExamplesTest.examples().resolve("seed-003-chat.yaml");
    PolicyConfig c = PolicyLoader.load(example, Map.of()).config();
    Rule codes = c.policy().rules().get("invite:codes");
    assertThat(codes.cooldown().maxRetries()).isEqualTo(8);
    assertThat(codes.cooldown().retryWindow()).isEqualTo(Duration.ofMinutes(5));
    assertThat(codes.countStatus().statuses()).containsExactly(404);
    assertThat(codes.key()).isEqualTo("user:ip");
    assertThat(c.policy().rules().get("invite:joins").countStatus().contains(200)).isTrue();
    assertThat(c.policy().rules().get("invite:joins").countStatus().contains(404)).isFalse();
    PolicyConfig tuned = PolicyLoader.load(example, Map.of("SERVER_INVITE_MAX_RETRIES", "3",
        "SERVER_INVITE_RETRY_COOLDOWN_MS", "2000", "SERVER_INVITE_MAX_COOLDOWN_MS", "8000"))
        .config();
    Rule t = tuned.policy().rules().get("invite:codes");
    assertThat(t.cooldown().maxRetries()).isEqualTo(3);
    assertThat(t.cooldown().cooldown()).isEqualTo(Duration.ofSeconds(2));
    assertThat(t.cooldown().maxCooldown()).isEqualTo(Duration.ofSeconds(8));
  }

  @Test
  void countedRules_concurrencyAndStatuses_load() throws Exception {
    PolicyConfig c = load(String.join("\n",
        "deny: [203.0.113.0/24]",
        "response: {status: 503}",
        "rules:",
        "  login:",
        "    countStatus: [401, 403]",
        "    status: 403",
        "    limits: [{type: sliding-window, limit: 5, window: 15m}]",
        "  conn:",
        "    limits: [{type: concurrency, max: 55}]",
        "routes:",
        "  - {paths: [/login], rules: [login, conn]}",
        ""), Map.of()).config();
    Rule login = c.policy().rules().get("login");
    assertThat(login.countStatus().statuses()).containsExactly(401, 403);
    assertThat(c.policy().rules().get("conn").concurrency()).isEqualTo(55);
    assertThat(c.policy().rules().get("conn").leaseTtl()).isEqualTo(Rule.DEFAULT_LEASE_TTL);
    assertThat(c.policy().deny().toList()).containsExactly("203.0.113.0/24");
    assertThat(c.responses().refusalStatus()).isEqualTo(503);
    assertThat(c.responses().ruleStatuses()).containsEntry("login", 403);
  }

  @Test
  void badEscalationKeys_areErrorsAtTheirLines() {
    assertThat(errors(String.join("\n",
        "deny: [not-a-net]",
        "rules:",
        "  a:",
        "    countStatus: [401]",
        "    skip: success",
        "    limits: [{type: fixed-window, limit: 1, window: 1s}]",
        "  b:",
        "    limits:",
        "      - {type: cooldown, maxRetries: 3}",
        "      - {type: fixed-window, limit: 1, window: 1s}",
        "  c:",
        "    countStatus: [401]",
        "    limits: [{type: concurrency, max: 3}]",
        "  d:",
        "    ban: 1m",
        "    limits: [{type: cooldown, maxRetries: 0}]",
        "  e:",
        "    status: 200",
        "    countStatus: [99]",
        "    limits: [{type: fixed-window, limit: 1, window: 1s}]",
        "routes:",
        "  - {paths: [/x], rules: [a], humanCheck: nope}",
        ""))).containsExactly(
        "p.yaml:1: deny[0] : \"not-a-net\" (expected: an IPv4 or IPv6 network like 10.0.0.0/8 "
            + "or ::1/128)",
        "p.yaml:5: rules.a.skip : \"success\" (expected: countStatus or skip, not both (they say "
            + "the same thing two ways))",
        "p.yaml:9: rules.b.limits[0] : cooldown (expected: a cooldown alone in the rule's limits "
            + "(make another rule for the other limits; a route can apply both))",
        "p.yaml:12: rules.c.countStatus : [401] (expected: none on concurrency rule 'c' (it "
            + "counts requests in flight))",
        "p.yaml:16: rules.d.limits[0].maxRetries : 0 (expected: a whole number > 0)",
        "p.yaml:18: rules.e.status : 200 (expected: a whole number in 400..599)",
        "p.yaml:19: rules.e.countStatus[0] : 99 (expected: a whole number in 100..599)",
        "p.yaml:22: routes[0].humanCheck : \"nope\" (expected: a human check under humanChecks:, "
            + "one of [] (no humanChecks: section))");
  }

  @Test
  void humanCheck_secretFromAFile_neverShown() throws Exception {
    Files.writeString(dir.resolve("turnstile.key"), "0x4AAAAAAA-secret\n");
    LoadedPolicy p = load(String.join("\n",
        "humanChecks:",
        "  turnstile:",
        "    secretFile: turnstile.key",
        "    hostname: app.example.com",
        "    action: login",
        "    onError: deny",
        "    limits: [{type: fixed-window, limit: 30, window: 60s}]",
        "routes:",
        "  - {name: signin, methods: [POST], paths: [/login], humanCheck: turnstile}",
        ""), Map.of());
    HumanCheck h = p.config().policy().humanChecks().get("turnstile");
    assertThat(h.secret()).isEqualTo("0x4AAAAAAA-secret");
    assertThat(h.provider()).isEqualTo(HumanCheck.Provider.TURNSTILE);
    assertThat(h.field()).isEqualTo("cf-turnstile-response");
    assertThat(h.onError()).isEqualTo(OnStoreError.DENY);
    assertThat(p.config().policy().routes().get(0).humanCheck()).isEqualTo("turnstile");
    String shown = PolicyFormat.toYaml(p.effective());
    assertThat(shown).contains("secretFile: turnstile.key").doesNotContain("0x4AAAAAAA");
  }

  @Test
  void humanCheck_badSettings_areErrors() {
    assertThat(errors(String.join("\n",
        "humanChecks:",
        "  signin:",
        "    secretFile: /nonexistent/turnstile.key",
        "    token: cookie",
        "  turnstile:",
        "    secretFile: /nonexistent/x",
        "    deadline: 2m",
        "    verifyUrl: ftp://x",
        "routes:",
        "  - {paths: [/h], exempt: true, humanCheck: turnstile}",
        ""))).containsExactly(
        "p.yaml:3: humanChecks.signin.provider : missing (expected: one of [turnstile, hcaptcha, "
            + "recaptcha] (the name is none of them))",
        "p.yaml:6: humanChecks.turnstile.secretFile : \"/nonexistent/x\" (expected: a readable file "
            + "holding the secret key (looked at /nonexistent/x))",
        "p.yaml:7: humanChecks.turnstile.deadline : \"2m\" (expected: a duration in 1ms..1m)",
        "p.yaml:8: humanChecks.turnstile.verifyUrl : \"ftp://x\" (expected: an http(s) URL like "
            + "https://challenges.cloudflare.com/turnstile/v0/siteverify)",
        "p.yaml:10: routes[0].humanCheck : \"turnstile\" (expected: no human check on an exempt "
            + "route (exempt requests are never checked))");
  }

  @Test
  void webSocketActions_cannotApplyRulesCountedOnResponses() {
    assertThat(errors(String.join("\n",
        "rules:",
        "  invites:",
        "    limits: [{type: cooldown}]",
        "websocket:",
        "  actionField: type",
        "  actionRules: {invite: invites}",
        ""))).containsExactly("p.yaml:6: websocket.actionRules.invite : \"invites\" (expected: a "
            + "rule counted when a message comes (this one counts responses, or requests in "
            + "flight: only routes apply it))");
  }
}
