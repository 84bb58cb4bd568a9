package dev.sluice.policy;

import dev.sluice.core.Circuit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PolicyLoaderTest {

  private static final String MINIMAL = String.join("\n",
      "rules:",
      "  analysis:",
      "    limits:",
      "      - type: token-bucket",
      "        burst: 15",
      "        refill: 30",
      "        period: 1m",
      "routes:",
      "  - name: analysis",
      "    paths: [/api/analysis/**]",
      "    rules: [analysis]",
      "");

  static LoadedPolicy parse(String yaml, Map<String, String> env) throws ConfigException {
    return PolicyLoader.parse(yaml, "p.yaml", null, env);
  }

  static List<String> errors(String yaml) {
    return errors(yaml, Map.of());
  }

  static List<String> errors(String yaml, Map<String, String> env) {
    try {
      parse(yaml, env);
    } catch (ConfigException e) {
      return e.errors().stream().map(ConfigError::toString).toList();
    }
    throw new AssertionError("expected the policy to be rejected");
  }

  // --- the embedded default ---------------------------------------------------------------------

  @Test
  void embeddedDefault_isSeed000Table() throws Exception {
    LoadedPolicy p = PolicyLoader.loadDefault(Map.of());
    Map<String, Rule> rules = p.config().policy().rules();
    assertThat(rules.keySet()).containsExactlyInAnyOrder("connect", "read", "analysis", "write",
        "backstop");
    assertBucket(rules.get("connect"), 120, Duration.ofMillis(250));
    assertBucket(rules.get("read"), 120, Duration.ofMillis(250));
    assertBucket(rules.get("analysis"), 15, Duration.ofSeconds(2));
    assertBucket(rules.get("write"), 30, Duration.ofSeconds(1));
    Limit backstop = rules.get("backstop").limits().get(0);
    assertThat(backstop.kind()).isEqualTo(Limit.Kind.FIXED_WINDOW);
    assertThat(backstop.capacity()).isEqualTo(600);
    assertThat(backstop.windowNanos()).isEqualTo(Duration.ofSeconds(60).toNanos());
    assertThat(p.config().policy().global()).extracting(Rule::name).containsExactly("backstop");
    assertThat(p.config().policy().routes()).extracting(r -> r.name())
        .containsExactly("healthz", "connect", "analysis", "read", "static", "write");
    assertThat(p.config().trust().hops()).isZero();
    assertThat(p.warnings()).isEmpty();
    assertThat(p.sourceName()).isEqualTo("<embedded default>");
  }

  private static void assertBucket(Rule rule, long burst, Duration perToken) {
    Limit l = rule.limits().get(0);
    assertThat(l.kind()).isEqualTo(Limit.Kind.TOKEN_BUCKET);
    assertThat(l.capacity()).isEqualTo(burst);
    assertThat(l.periodNanos()).isEqualTo(perToken.toNanos());
    assertThat(rule.key()).isEqualTo("ip");
    assertThat(rule.mode()).isEqualTo(Mode.ENFORCE);
  }

  @Test
  void embeddedDefault_envOverridesApply() throws Exception {
    LoadedPolicy p = PolicyLoader.loadDefault(Map.of("LIMIT_ANALYSIS_BURST", "5",
        "LIMIT_ANALYSIS_RATE", "60", "TRUST_PROXY", "1", "RATE_LIMIT_MAX", "100",
        "RATE_LIMIT_WINDOW_MS", "1000"));
    Map<String, Rule> rules = p.config().policy().rules();
    assertBucket(rules.get("analysis"), 5, Duration.ofSeconds(1));
    assertThat(rules.get("backstop").limits().get(0).capacity()).isEqualTo(100);
    assertThat(rules.get("backstop").limits().get(0).windowNanos())
        .isEqualTo(Duration.ofSeconds(1).toNanos());
    assertThat(p.config().trust().hops()).isEqualTo(1);
    assertThat(p.warnings()).isEmpty();
    @SuppressWarnings("unchecked")
    Map<String, Object> analysis = (Map<String, Object>) ((Map<String, Object>) p.effective()
        .get("rules")).get("analysis");
    assertThat(analysis.get("limits").toString()).contains("burst=5", "refill=60");
  }

  @Test
  void envOverride_notPositive_fallsBackWithOneWarningNamingTheVariable() throws Exception {
    LoadedPolicy p = PolicyLoader.loadDefault(Map.of("LIMIT_ANALYSIS_BURST", "-3",
        "LIMIT_READ_RATE", "lots", "LIMIT_WRITE_BURST", "0"));
    assertBucket(p.config().policy().rules().get("analysis"), 15, Duration.ofSeconds(2));
    assertBucket(p.config().policy().rules().get("read"), 120, Duration.ofMillis(250));
    assertBucket(p.config().policy().rules().get("write"), 30, Duration.ofSeconds(1));
    assertThat(p.warnings()).containsExactly(
        "LIMIT_READ_RATE=\"lots\" is not valid for "
            + "rules.read.limits[0].refill (expected: a whole number > 0); using the default 240",
        "LIMIT_ANALYSIS_BURST=-3 is not valid for rules.analysis.limits[0].burst "
            + "(expected: a whole number > 0); using the default 15",
        "LIMIT_WRITE_BURST=0 is not valid for rules.write.limits[0].burst "
            + "(expected: a whole number > 0); using the default 30");
  }

  @Test
  void envOverride_usedTwice_warnsOnce() throws Exception {
    String yaml = MINIMAL.replace("burst: 15", "burst: ${B:-15}").replace("refill: 30",
        "refill: ${B:-30}");
    LoadedPolicy p = parse(yaml, Map.of("B", "x"));
    assertThat(p.warnings()).hasSize(1).allMatch(w -> w.startsWith("B=\"x\" is not valid"));
  }

  @Test
  void rateLimitMaxZero_switchesTheBackstopOff_withoutAFallbackWarning() throws Exception {
    LoadedPolicy p = PolicyLoader.loadDefault(Map.of("RATE_LIMIT_MAX", "0"));
    assertThat(p.config().policy().rules().get("backstop").mode()).isEqualTo(Mode.OFF);
    assertThat(p.warnings()).containsExactly("RATE_LIMIT_MAX=0 switches rule 'backstop' off");
  }

  @Test
  void trustedProxies_fromEnv_commaSeparated() throws Exception {
    LoadedPolicy p = PolicyLoader.loadDefault(Map.of("TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.7"));
    assertThat(p.config().trust().proxies()).containsExactly("10.0.0.0/8", "192.168.1.7");
  }

  @Test
  void clientHeaders_defaultToTheCdnNames_andAreReadInLowerCase() throws Exception {
    assertThat(parse(MINIMAL, Map.of()).config().trust().clientHeaders())
        .contains("true-client-ip", "cf-connecting-ip");
    assertThat(parse(MINIMAL + "trust:\n  clientHeaders: [X-Client-Id]\n", Map.of()).config()
        .trust().clientHeaders()).containsExactly("x-client-id");
    assertThat(parse(MINIMAL + "trust:\n  clientHeaders: []\n", Map.of()).config().trust()
        .clientHeaders()).isEmpty();
    assertThat(errors(MINIMAL + "trust:\n  clientHeaders: [\"a b\"]\n")).containsExactly(
        "p.yaml:13: trust.clientHeaders[0] : \"a b\" (expected: header names like True-Client-IP)");
  }

  @Test
  void trustProxyAndTrustedProxies_both_isAnError() {
    assertThatThrownBy(() -> PolicyLoader.loadDefault(Map.of("TRUST_PROXY", "1",
        "TRUSTED_PROXIES", "10.0.0.0/8")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("<embedded default>:")
        .hasMessageContaining("trust.proxies : \"10.0.0.0/8\" (expected: either trust.hops "
            + "(TRUST_PROXY) or trust.proxies (TRUSTED_PROXIES), not both; hops is 1)");
  }

  @Test
  void wellKnownVariable_setButNotRead_warns() throws Exception {
    LoadedPolicy p = parse(MINIMAL, Map.of("TRUST_PROXY", "1"));
    assertThat(p.warnings()).containsExactly("TRUST_PROXY is set but p.yaml does not read it "
        + "(write ${TRUST_PROXY} in the policy to use it)");
  }

  @Test
  void variableWithoutDefault_unset_isAnError() {
    assertThat(errors(MINIMAL.replace("burst: 15", "burst: ${NOPE}"))).containsExactly(
        "p.yaml:5: rules.analysis.limits[0].burst : \"${NOPE}\" (expected: environment "
            + "variable NOPE to be set, or a default: ${NOPE:-value})");
  }

  // --- every error kind, with file, line, path, value and expectation --------------------------

  @Test
  void webSocketFragmentCapAndCloseTimeout_areBounded() {
    assertThat(errors(MINIMAL + "websocket:\n  maxFragments: 0\n  closeTimeout: 2m\n"))
        .containsExactly("p.yaml:13: websocket.maxFragments : 0 (expected: a whole number > 0)",
            "p.yaml:14: websocket.closeTimeout : \"2m\" (expected: a duration in 1ms..1m)");
  }

  @Test
  void checkApi_isOffByDefault_andItsPlaceAndLimitAreRead() throws Exception {
    RlsSettings d = parse(MINIMAL, Map.of()).config().rls();
    assertThat(d.checkApi()).isEqualTo("off");
    assertThat(d.checkApiLimit()).isEqualTo(new RlsSettings.Bucket(1000, 1000,
        Duration.ofSeconds(1)));
    RlsSettings r = parse(MINIMAL + "rls:\n  checkApi: 127.0.0.1:9091\n  checkApiLimit: "
        + "{burst: 10, period: 1h}\n", Map.of()).config().rls();
    assertThat(r.checkApi()).isEqualTo("127.0.0.1:9091");
    assertThat(r.checkApiLimit()).isEqualTo(new RlsSettings.Bucket(10, 1000,
        Duration.ofHours(1)));
    assertThat(parse(MINIMAL + "rls:\n  checkApi: gateway\n", Map.of()).config().rls()
        .checkApi()).isEqualTo("gateway");
    assertThat(errors(MINIMAL + "rls:\n  checkApi: public\n  checkApiLimit: {burst: 0}\n"))
        .containsExactly("p.yaml:13: rls.checkApi : \"public\" (expected: off, admin, gateway, "
            + "or HOST:PORT like 127.0.0.1:9091)",
            "p.yaml:14: rls.checkApiLimit.burst : 0 (expected: a whole number > 0)");
  }

  @Test
  void unknownKey_isRejected_withSuggestion() {
    assertThat(errors(MINIMAL.replace("    limits:", "    limts: []\n    limits:")))
        .containsExactly("p.yaml:3: rules.analysis.limts : unknown key (expected: did you mean "
            + "'limits'? one of key, offSwitch, limits, skip, countStatus, status, ban, mode, "
            + "onStoreError, sharedBucket, delay, delayQueue, action, difficulty, maxDifficulty)");
  }

  @Test
  void unknownTopLevelSection_isRejected() {
    assertThat(errors(MINIMAL + "rule: {}\n")).containsExactly(
        "p.yaml:12: rule : unknown key (expected: did you mean 'rules'? one of version, trust, "
            + "dimensions, rules, routes, global, response, cors, websocket, gateway, store, "
            + "moderation, domains, rls, domain, descriptors, allow, mode, logging, path, deny, "
            + "humanChecks, challenge)");
  }

  @Test
  void wrongType_isRejected() {
    assertThat(errors(MINIMAL.replace("burst: 15", "burst: [15]"))).containsExactly(
        "p.yaml:5: rules.analysis.limits[0].burst : a list (expected: a whole number > 0)");
    assertThat(errors(MINIMAL.replace("    paths: [/api/analysis/**]", "    exempt: yes")))
        .containsExactly("p.yaml:10: routes[0].exempt : \"yes\" (expected: true or false)");
    assertThat(errors("rules: [a, b]\n")).containsExactly(
        "p.yaml:1: rules : a list (expected: a mapping of rule names to rules)");
  }

  @Test
  void impossibleValues_areRejected_withTheirLines() {
    String yaml = MINIMAL.replace("burst: 15", "burst: -5").replace("period: 1m", "period: 60");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:5: rules.analysis.limits[0].burst : -5 (expected: a whole number > 0)",
        "p.yaml:7: rules.analysis.limits[0].period : 60 (expected: a duration like 500ms, 60s, "
            + "1.5s, 10m, 1h or 1d)");
  }

  @Test
  void coreValidation_isReportedAtTheField() {
    String yaml = String.join("\n",
        "rules:",
        "  chat:",
        "    limits:",
        "      - type: score",
        "        maxScore: 10",
        "        perAction: 20",
        "        decay: 2s",
        "");
    assertThat(errors(yaml)).containsExactly("p.yaml:6: rules.chat.limits[0].perAction : 20 "
        + "(expected: between 0.000001 and maxScore 10.0)");
  }

  @Test
  void missingFields_andUnknownLimitType() {
    String yaml = String.join("\n",
        "rules:",
        "  a:",
        "    limits:",
        "      - type: fixed-window",
        "        limit: 10",
        "      - type: gcra",
        "      - {limit: 3}",
        "  b: {}",
        "");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:4: rules.a.limits[0].window : missing (expected: a duration like 500ms, 60s, "
            + "1.5s, 10m, 1h or 1d)",
        "p.yaml:6: rules.a.limits[1].type : \"gcra\" (expected: one of concurrency, "
            + "cooldown, fixed-window, leaky-bucket, score, sliding-log, sliding-window, "
            + "token-bucket)",
        "p.yaml:7: rules.a.limits[2].type : missing (expected: one of concurrency, cooldown, "
            + "fixed-window, leaky-bucket, score, sliding-log, sliding-window, token-bucket)",
        "p.yaml:8: rules.b.limits : missing (expected: a list of limits, each with a type: "
            + "concurrency, cooldown, fixed-window, leaky-bucket, score, sliding-log, "
            + "sliding-window, token-bucket)");
  }

  @Test
  void dangling_references_areRejected() {
    String yaml = MINIMAL.replace("rules: [analysis]", "rules: [analysis, nope]")
        + "global: [gone]\n";
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:11: routes[0].rules[1] : \"nope\" (expected: a rule defined under rules:, one of "
            + "[analysis])",
        "p.yaml:12: global : \"gone\" (expected: a rule defined under rules:, one of [analysis])");
  }

  @Test
  void undeclaredDimension_inKey_isRejected() {
    assertThat(errors(MINIMAL.replace("    limits:", "    key: event:user:ip\n    limits:")))
        .containsExactly("p.yaml:3: rules.analysis.key : \"event:user:ip\" (expected: dimensions "
            + "declared under dimensions:, one of [ip] (missing 'event'))");
  }

  @Test
  void duplicateKey_isRejected() {
    List<String> errors = errors(MINIMAL + "routes: []\n");
    assertThat(errors).hasSize(1);
    assertThat(errors.get(0)).startsWith("p.yaml:");
  }

  @Test
  void yamlSyntaxError_hasALine() {
    assertThat(errors("rules:\n  a: [\n")).containsExactly(
        "p.yaml:3: (yaml) : expected the node content, but found '<stream end>' "
            + "(expected: valid YAML)");
  }

  @Test
  void emptyDocument_isRejected() {
    assertThat(errors("# nothing\n")).containsExactly(
        "p.yaml:1: (document) : empty (expected: a mapping with sections like rules: and routes:)");
  }

  @Test
  void everyError_isReported_notJustTheFirst() {
    String yaml = String.join("\n",
        "rules:",
        "  a:",
        "    mode: dry",
        "    onStoreError: maybe",
        "    ban: 5x",
        "    limits:",
        "      - {type: sliding-log, limit: 200000, window: 1s}",
        "routes:",
        "  - paths: [api]",
        "    cost: 0",
        "cors:",
        "  allowOrigins: ['*']",
        "  allowCredentials: true",
        "gateway:",
        "  maxBodyBytes: 1MB",
        "store:",
        "  uri: mysql://db",
        "");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:3: rules.a.mode : \"dry\" (expected: one of enforce, shadow, off)",
        "p.yaml:4: rules.a.onStoreError : \"maybe\" (expected: one of allow, deny)",
        "p.yaml:5: rules.a.ban : \"5x\" (expected: a duration like 500ms, 60s, 1.5s, 10m, 1h or 1d)",
        "p.yaml:7: rules.a.limits[0].limit : 200000 (expected: a whole number <= 100000)",
        "p.yaml:9: routes[0].paths[0] : \"api\" (expected: a pattern starting with '/', like "
            + "\"/api/**\")",
        "p.yaml:10: routes[0].cost : 0 (expected: a whole number > 0)",
        "p.yaml:13: cors.allowCredentials : true (expected: false when allowOrigins contains * "
            + "(browsers reject credentials with a wildcard origin; list the origins instead))",
        "p.yaml:15: gateway.maxBodyBytes : \"1MB\" (expected: a size in bytes, or like 64KiB, 1MiB)",
        "p.yaml:17: store.uri : \"mysql://db\" (expected: memory, redis://HOST:PORT, "
            + "rediss://HOST:PORT or redis-cluster://H1:P1,H2:P2)");
  }

  /** The circuit's ranges are the Redis store's own, reported at the file's line. */
  @Test
  void storeCircuitAndStartupWait_errorsWithFileAndLine() {
    String yaml = String.join("\n",
        "store:",
        "  uri: redis://127.0.0.1:6379",
        "  startupWait: 10m",
        "  circuit:",
        "    failureRate: 0",
        "    window: 50ms",
        "    slowCall: soon",
        "    failures: 5",
        "");
    assertThat(errors(yaml)).containsExactly(
        "p.yaml:3: store.startupWait : \"10m\" (expected: a duration in 0s..5m)",
        "p.yaml:5: store.circuit.failureRate : 0 (expected: 1..100)",
        "p.yaml:6: store.circuit.window : \"50ms\" (expected: 100ms..1m)",
        "p.yaml:7: store.circuit.slowCall : \"soon\" (expected: a duration like 500ms, 60s, 1.5s, "
            + "10m, 1h or 1d)",
        "p.yaml:8: store.circuit.failures : unknown key (expected: one of failureRate, "
            + "slowCallRate, slowCall, window, minimumCalls, open, halfOpenCalls)");
  }

  @Test
  void storeDefaults_inTheEffectivePolicy() throws Exception {
    Object store = PolicyLoader.loadDefault(Map.of()).effective().get("store");
    assertThat(store.toString()).contains("startupWait=10s").contains("circuit={failureRate=50, "
        + "slowCallRate=100, slowCall=deadline, window=2s, minimumCalls=100, open=500ms, "
        + "halfOpenCalls=3}");
  }

  @Test
  void missingFile_isAnError_namingTheFile() {
    assertThatThrownBy(() -> PolicyLoader.load(java.nio.file.Path.of("/nonexistent/p.yaml"),
        Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("/nonexistent/p.yaml:1: (file) : cannot be read: no such file "
            + "(expected: a readable UTF-8 policy file)");
  }

  // --- everything else the file can say ------------------------------------------------------

  @Test
  void fullRule_andSections_areRead() throws Exception {
    String yaml = String.join("\n",
        "trust:",
        "  hops: 2",
        "  headers: [forwarded]",
        "  ipv6Prefix: 56",
        "dimensions:",
        "  user: header:X-User-Id",
        "  session: cookie:sid",
        "rules:",
        "  chat-send:",
        "    key: user:ip",
        "    limits:",
        "      - {type: sliding-log, name: window, limit: 20, window: 10s}",
        "      - {type: score, name: score, maxScore: 10, perAction: 0.2, decay: 1.5s}",
        "    ban: 30s",
        "    mode: shadow",
        "    onStoreError: deny",
        "    sharedBucket: anonymous",
        "routes:",
        "  - name: chat",
        "    methods: [post]",
        "    paths: [/chat/*]",
        "    websocket: false",
        "    rules: [chat-send]",
        "    cost: 2",
        "response:",
        "  rateLimitHeaders: false",
        "  ietfHeaders: true",
        "cors:",
        "  allowOrigins: [https://app.example.com]",
        "  allowCredentials: true",
        "  maxAge: 10m",
        "websocket:",
        "  refuseBeforeUpgrade: true",
        "  maxConnectionsPerIp: 55",
        "  maxConnectionsPerSession: 3",
        "  sessionDimension: session",
        "  maxFrameBytes: 128KiB",
        "  maxFragments: 64",
        "  floodBurst: 150",
        "  floodPerSecond: 15",
        "  actionField: type",
        "  actionRules: {chat:send: chat-send}",
        "  strikes: 3",
        "  strikeWindow: 1m",
        "  closeTimeout: 500ms",
        "gateway:",
        "  maxBodyBytes: 2MiB",
        "  idleTimeout: 30s",
        "store:",
        "  uri: redis://127.0.0.1:6379",
        "  keyPrefix: 'app:'",
        "  deadline: 20ms",
        "  localFallback: true",
        "  startupWait: 30s",
        "  circuit: {failureRate: 60%, window: 5s, minimumCalls: 20, open: 250ms, slowCall: 30ms,",
        "    slowCallRate: 80, halfOpenCalls: 5}",
        "");
    PolicyConfig c = parse(yaml, Map.of()).config();
    Rule rule = c.policy().rules().get("chat-send");
    assertThat(rule.key()).isEqualTo("user:ip");
    assertThat(rule.limits()).extracting(Limit::name).containsExactly("window", "score");
    assertThat(rule.limits().get(1).perAction()).isEqualTo(0.2);
    assertThat(rule.limits().get(1).periodNanos()).isEqualTo(Duration.ofMillis(1500).toNanos());
    assertThat(rule.ban()).isEqualTo(Duration.ofSeconds(30));
    assertThat(rule.mode()).isEqualTo(Mode.SHADOW);
    assertThat(rule.onStoreError()).isEqualTo(OnStoreError.DENY);
    assertThat(c.policy().routes().get(0).methods()).containsExactly("POST");
    assertThat(c.policy().routes().get(0).cost()).isEqualTo(2);
    assertThat(c.policy().routes().get(0).websocket()).isFalse();
    assertThat(c.trust()).isEqualTo(new TrustSettings(2, List.of(), List.of("forwarded"), 56,
        "unknown", TrustSettings.DEFAULT_CLIENT_HEADERS));
    assertThat(c.response()).isEqualTo(new ResponseSettings(false, true, null));
    assertThat(c.cors().allowOrigins()).containsExactly("https://app.example.com");
    assertThat(c.cors().maxAge()).isEqualTo(Duration.ofMinutes(10));
    assertThat(c.websocket().maxFrameBytes()).isEqualTo(128 * 1024);
    assertThat(c.websocket().actionRules()).containsEntry("chat:send", "chat-send");
    assertThat(c.websocket().sessionDimension()).isEqualTo("session");
    assertThat(c.websocket().strikes()).isEqualTo(3);
    assertThat(c.websocket().maxFragments()).isEqualTo(64);
    assertThat(c.websocket().closeTimeout()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.gateway().maxBodyBytes()).isEqualTo(2 << 20);
    assertThat(c.gateway().idleTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.gateway().handshakeTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.store()).isEqualTo(new StoreSettings("redis://127.0.0.1:6379", 1_000_000, "app:",
        Duration.ofMillis(20), true, Circuit.builder().failureRate(60)
            .window(Duration.ofSeconds(5)).minimumCalls(20).open(Duration.ofMillis(250))
            .slowCall(Duration.ofMillis(30)).slowCallRate(80).halfOpenCalls(5).build(),
        Duration.ofSeconds(30)));
  }

  @Test
  void effectivePolicy_roundTrips_throughYaml() throws Exception {
    LoadedPolicy p = PolicyLoader.loadDefault(Map.of("LIMIT_READ_BURST", "7"));
    String yaml = PolicyFormat.toYaml(p.effective());
    LoadedPolicy again = parse(yaml, Map.of());
    assertThat(again.effective()).isEqualTo(p.effective());
    assertThat(again.config().policy().rules().get("read").limits().get(0).capacity())
        .isEqualTo(7);
  }

  @Test
  void json_isValidAndOrdered() throws Exception {
    String json = PolicyFormat.toJson(PolicyLoader.loadDefault(Map.of()).effective());
    assertThat(json).startsWith("{\"version\":1,\"trust\":{\"hops\":0,");
    assertThat(json).contains("\"analysis\":{\"key\":\"ip\",\"limits\":[{\"type\":\"token-bucket\","
        + "\"name\":\"analysis\",\"burst\":15,\"refill\":30,\"period\":\"1m\"}]");
  }
}
