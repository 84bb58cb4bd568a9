package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A section read and rendered from its one table of fields: the keys it accepts, the defaults of
 * what it leaves out, the value of what it gives, errors at the value's line, and the rendering.
 */
class FieldsTest {

  private static PolicyConfig parse(String... lines) throws Exception {
    return PolicyLoader.parse(String.join("\n", lines) + "\n", "p.yaml", null, Map.of()).config();
  }

  @Test
  void gateway_givenKeysAreRead_theRestAreDefaults_andTheRenderingListsEveryKeyInOrder()
      throws Exception {
    GatewaySettings g = parse("gateway:", "  maxHeaderBytes: 16KiB", "  idleTimeout: 2m")
        .gateway();
    GatewaySettings d = GatewaySettings.defaults();
    assertThat(g.maxHeaderBytes()).isEqualTo(16 * 1024);
    assertThat(g.idleTimeout()).isEqualTo(Duration.ofMinutes(2));
    assertThat(g.maxBodyBytes()).isEqualTo(d.maxBodyBytes());
    assertThat(g.upstreamResponseTimeout()).isEqualTo(d.upstreamResponseTimeout());
    Map<String, Object> shown = GatewaySection.render(g);
    assertThat(List.copyOf(shown.keySet())).containsExactlyElementsOf(GatewaySection.KEYS
        .stream().filter(k -> !k.equals("healthPath")).toList());
    assertThat(shown).containsEntry("maxHeaderBytes", "16KiB").containsEntry("idleTimeout", "2m");
    assertThat(GatewaySection.render(parse("gateway: {healthPath: /up}").gateway()))
        .containsEntry("healthPath", "/up");
  }

  @Test
  void aBadValue_isAnErrorAtItsLine_withWhatTheFieldExpects() {
    assertThatThrownBy(() -> parse("cors:", "  allowOrigins: [https://a.example]",
        "  maxAge: soon"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("p.yaml:3: cors.maxAge : \"soon\"");
    assertThatThrownBy(() -> parse("store:", "  keyPrefix: 'a b'"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("p.yaml:2: store.keyPrefix")
        .hasMessageContaining("up to 64 characters without spaces or braces");
  }

  @Test
  void humanChecks_defaultsAreTheProvidersOwn_andTheRenderingFollowsTheTable(@TempDir Path dir)
      throws Exception {
    Path key = Files.writeString(dir.resolve("k"), "secret-key\n");
    PolicyConfig c = parse("humanChecks:", "  turnstile: {secretFile: '" + key + "'}",
        "  login: {provider: recaptcha, secretFile: '" + key + "', minScore: 0.7,",
        "    verifyUrl: 'http://127.0.0.1:9/v', token: header, maxAge: 2m}");
    Map<String, Object> plain = HumanChecksSection.render(c.policy().humanChecks()
        .get("turnstile"));
    assertThat(List.copyOf(plain.keySet())).containsExactlyElementsOf(HumanChecksSection.KEYS
        .stream().filter(k -> !List.of("hostname", "action", "minScore", "verifyUrl").contains(k))
        .toList());
    assertThat(plain).containsEntry("token", "form").containsEntry("field", "cf-turnstile-response")
        .containsEntry("maxAge", "5m").containsEntry("deadline", "3s")
        .containsEntry("onError", "allow").containsEntry("key", "ip")
        .containsEntry("secretFile", key.toString());
    Map<String, Object> login = HumanChecksSection.render(c.policy().humanChecks().get("login"));
    assertThat(login).containsEntry("provider", "recaptcha").containsEntry("minScore", 0.7)
        .containsEntry("verifyUrl", "http://127.0.0.1:9/v").containsEntry("token", "header")
        .containsEntry("field", "g-recaptcha-response").containsEntry("maxAge", "2m");
  }

  @Test
  void rules_defaultsAreCoresOwn_andTheRenderingFollowsTheTable() throws Exception {
    PolicyConfig c = parse("rules:",
        "  plain:",
        "    limits: [{type: fixed-window, limit: 5, window: 1m}]",
        "  full:",
        "    key: ip",
        "    offSwitch: FULL_MAX",
        "    limits: [{type: fixed-window, limit: 5, window: 1m}]",
        "    skip: success",
        "    status: 403",
        "    ban: 10m",
        "    mode: shadow",
        "    onStoreError: deny",
        "    sharedBucket: anon",
        "    delay: 500ms",
        "    delayQueue: 4",
        "  puzzle:",
        "    limits: [{type: fixed-window, limit: 5, window: 1m}]",
        "    action: challenge",
        "    difficulty: 12",
        "    maxDifficulty: 20");
    Map<String, Object> plain = RulesSection.render(c.policy().rules().get("plain"), null);
    assertThat(List.copyOf(plain.keySet()))
        .containsExactly("key", "limits", "mode", "onStoreError", "sharedBucket");
    assertThat(plain).containsEntry("key", "ip").containsEntry("mode", "enforce")
        .containsEntry("onStoreError", "allow").containsEntry("sharedBucket", "unknown");
    Map<String, Object> full = RulesSection.render(c.policy().rules().get("full"),
        c.offSwitches().get("full"));
    assertThat(List.copyOf(full.keySet())).containsExactlyElementsOf(RulesSection.KEYS.stream()
        .filter(k -> !List.of("countStatus", "action", "difficulty", "maxDifficulty").contains(k))
        .toList());
    assertThat(full).containsEntry("offSwitch", "FULL_MAX").containsEntry("skip", "success")
        .containsEntry("status", 403).containsEntry("ban", "10m").containsEntry("mode", "shadow")
        .containsEntry("onStoreError", "deny").containsEntry("sharedBucket", "anon")
        .containsEntry("delay", "500ms").containsEntry("delayQueue", 4);
    assertThat(RulesSection.render(c.policy().rules().get("puzzle"), null))
        .containsEntry("action", "challenge").containsEntry("difficulty", 12)
        .containsEntry("maxDifficulty", 20);
  }

  @Test
  void routes_defaultsAreCoresOwn_andTheRenderingFollowsTheTable() throws Exception {
    PolicyConfig c = parse("rules:",
        "  r: {limits: [{type: fixed-window, limit: 5, window: 1m}]}",
        "routes:",
        "  - {paths: [/a]}",
        "  - {name: full, methods: [GET], paths: ['/b/**'], websocket: false,",
        "     hosts: [api.example.com], headers: {X-V: '2'}, from: [10.0.0.0/8],",
        "     caseInsensitive: true, rules: [r], cost: 2}");
    Map<String, Object> plain = RoutesSection.render(c.policy().routes().get(0));
    assertThat(plain).isEqualTo((Map.of(
        "name", "route-1", "methods", List.of(), "paths", List.of("/a"), "rules", List.of(),
        "exempt", false, "cost", 1L)));
    assertThat(List.copyOf(plain.keySet()))
        .containsExactly("name", "methods", "paths", "rules", "exempt", "cost");
    Map<String, Object> full = RoutesSection.render(c.policy().routes().get(1));
    assertThat(List.copyOf(full.keySet())).containsExactlyElementsOf(RoutesSection.KEYS.stream()
        .filter(k -> !k.equals("humanCheck")).toList());
    assertThat(full).containsEntry("websocket", false).containsEntry("caseInsensitive", true)
        .containsEntry("hosts", List.of("api.example.com")).containsEntry("cost", 2L)
        .containsEntry("headers", Map.of("x-v", "2"));
  }

  @Test
  void store_rendersItsUriWithoutThePassword_andItsCircuitAfterTheTable() throws Exception {
    Map<String, Object> shown = StoreSection.render(parse("store:",
        "  uri: redis://:s3cret@127.0.0.1:6379", "  maxKeys: 10").store());
    assertThat(List.copyOf(shown.keySet())).containsExactlyElementsOf(StoreSection.KEYS);
    assertThat(shown.get("uri").toString()).doesNotContain("s3cret");
    assertThat(shown).containsEntry("maxKeys", 10);
  }
}
