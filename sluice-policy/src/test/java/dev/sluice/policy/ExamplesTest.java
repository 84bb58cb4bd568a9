package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every policy in {@code examples/} loads, and says what its comments say it does. */
class ExamplesTest {

  static Path examples() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isDirectory(dir.resolve("examples"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("an examples/ directory above the working directory").isNotNull();
    return dir.resolve("examples");
  }

  static LoadedPolicy load(String name) throws ConfigException {
    return PolicyLoader.load(examples().resolve(name), Map.of());
  }

  @Test
  void everyExample_isValid() throws Exception {
    List<Path> files;
    try (Stream<Path> s = Files.list(examples())) {
      files = s.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
          .sorted().toList();
    }
    assertThat(files).hasSizeGreaterThanOrEqualTo(5);
    for (Path file : files) {
      LoadedPolicy p = PolicyLoader.load(file, Map.of());
      assertThat(p.config().policy().rules()).as(file.toString()).isNotEmpty();
      // the effective policy is itself a valid policy
      assertThat(PolicyLoader.parse(PolicyFormat.toYaml(p.effective()), file + " (effective)",
          file, Map.of()).effective()).isEqualTo(p.effective());
    }
  }

  @Test
  void seed000_isTheEmbeddedDefault_byteForByte() throws Exception {
    byte[] example = Files.readAllBytes(examples().resolve("seed-000-default.yaml"));
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.DEFAULT_RESOURCE)) {
      assertThat(in.readAllBytes()).isEqualTo(example);
    }
  }

  @Test
  void seed001_gameServer() throws Exception {
    PolicyConfig c = load("seed-001-game-server.yaml").config();
    Map<String, Rule> rules = c.policy().rules();
    assertThat(rules.get("edge").mode()).isEqualTo(Mode.SHADOW);
    assertThat(rules.get("submit-answer").limits().get(0).kind())
        .isEqualTo(Limit.Kind.SLIDING_WINDOW);
    assertThat(rules.get("submit-answer").limits().get(0).capacity()).isEqualTo(50);
    assertThat(rules.get("submit-answer").key()).isEqualTo("user");
    assertThat(rules.get("game-results-session").limits().get(0).kind())
        .isEqualTo(Limit.Kind.SLIDING_LOG);
    assertThat(rules.get("game-results-ip").onStoreError()).isEqualTo(OnStoreError.DENY);
    assertThat(c.policy().routes().stream().filter(r -> r.name().equals("game-results"))
        .findFirst().orElseThrow().rules()).containsExactly("game-results-session",
        "game-results-ip");
    assertThat(c.websocket().maxConnectionsPerIp()).isEqualTo(55);
    assertThat(c.websocket().maxConnectionsPerSession()).isEqualTo(3);
    assertThat(c.websocket().maxConnectionsUnknown()).isEqualTo(75);
    assertThat(c.websocket().maxFrameBytes()).isEqualTo(128 * 1024);
    assertThat(c.websocket().actionRules()).hasSize(13).containsEntry("SEND_REACTION",
        "send-reaction");
    assertThat(c.websocket().strikes()).isEqualTo(3);
    assertThat(c.trust().hops()).isEqualTo(1);
    assertThat(PolicyLoader.load(examples().resolve("seed-001-game-server.yaml"),
        Map.of("EDGE_MODE", "enforce")).config().policy().rules().get("edge").mode())
        .isEqualTo(Mode.ENFORCE);
  }

  @Test
  void challenge_pagesChallengeBrowsers_theApiAndLoginRefuse_andTheKeyFileComesFromTheEnv(
      @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    PolicyConfig c = load("challenge.yaml").config();
    Map<String, Rule> rules = c.policy().rules();
    assertThat(rules.get("pages").action()).isEqualTo(Rule.Action.CHALLENGE);
    assertThat(rules.get("pages").difficulty()).isEqualTo(16);
    assertThat(rules.get("pages").maxDifficulty()).isEqualTo(20);
    assertThat(rules.get("pages").limits().get(0).capacity()).isEqualTo(120);
    assertThat(rules.get("api").action()).isEqualTo(Rule.Action.REFUSE);
    assertThat(rules.get("login").ban()).isEqualTo(Duration.ofMinutes(10));
    assertThat(rules.get("crawl-watch").mode()).as("action: log").isEqualTo(Mode.SHADOW);
    dev.sluice.core.policy.Challenge ch = c.policy().challenge();
    assertThat(ch.keySource()).as("no CHALLENGE_KEYS: the process's random key").isNull();
    assertThat(ch.clearance()).isEqualTo(Duration.ofHours(1));
    assertThat(ch.noscript()).isEqualTo(dev.sluice.core.policy.Challenge.NoScript.REFUSE);
    assertThat(ch.ipv4Prefix()).as("a clearance bound to the client's own address").isEqualTo(32);
    assertThat(ch.skip()).containsExactly("/robots.txt", "/.well-known/**");
    Path keys = dir.resolve("challenge.keys");
    Files.writeString(keys, java.util.Base64.getEncoder().encodeToString(new byte[32]) + "\n");
    PolicyConfig withKeys = PolicyLoader.load(examples().resolve("challenge.yaml"),
        Map.of("CHALLENGE_KEYS", keys.toString(), "PAGE_LIMIT", "300")).config();
    assertThat(withKeys.policy().challenge().keySource()).isEqualTo(keys.toString());
    assertThat(withKeys.policy().challenge().keyCount()).isEqualTo(1);
    assertThat(withKeys.policy().rules().get("pages").limits().get(0).capacity())
        .isEqualTo(300);
  }

  @Test
  void seed002_pubQuiz() throws Exception {
    PolicyConfig c = load("seed-002-pub-quiz.yaml").config();
    assertThat(c.policy().rules().get("poll").key()).isEqualTo("participant");
    assertThat(c.policy().rules().get("global").limits().get(0).capacity()).isEqualTo(1200);
    assertThat(c.response().htmlTemplate()).contains("{{retryAfter}}");
  }

  @Test
  void seed003_chat_windowAndScore_andBans() throws Exception {
    PolicyConfig c = load("seed-003-chat.yaml").config();
    Rule send = c.policy().rules().get("chat:send");
    assertThat(send.key()).isEqualTo("user:ip");
    assertThat(send.limits()).extracting(Limit::kind)
        .containsExactly(Limit.Kind.SLIDING_LOG, Limit.Kind.SCORE);
    assertThat(send.limits().get(0).capacity()).isEqualTo(20);
    assertThat(send.limits().get(1).maxScore()).isEqualTo(10);
    assertThat(send.ban()).isEqualTo(Duration.ofSeconds(30));
    Rule typing = c.policy().rules().get("chat:typing");
    assertThat(typing.limits().get(1).perAction()).isEqualTo(0.2);
    assertThat(typing.limits().get(1).periodNanos()).isEqualTo(Duration.ofMillis(1500).toNanos());
    assertThat(typing.ban()).isZero();
    Rule join = c.policy().rules().get("join:requests");
    assertThat(join.limits().get(0).windowNanos()).isEqualTo(Duration.ofHours(1).toNanos());
    assertThat(join.ban()).isEqualTo(Duration.ofMinutes(10));
    assertThat(c.policy().rules().get("moderation").limits().get(1).perAction()).isEqualTo(2);
    assertThat(c.websocket().actionField()).isEqualTo("event");
    assertThat(c.websocket().actionRules()).containsEntry("*", "default")
        .containsEntry("mod:ban", "moderation");
  }

  @Test
  void seed004_globalGraphqlLimiter() throws Exception {
    LoadedPolicy p = load("seed-004-graphql.yaml");
    PolicyConfig c = p.config();
    assertThat(c.policy().global()).extracting(Rule::name).containsExactly("global");
    Limit global = c.policy().rules().get("global").limits().get(0);
    assertThat(global.kind()).isEqualTo(Limit.Kind.FIXED_WINDOW);
    assertThat(global.capacity()).isEqualTo(600);
    assertThat(global.windowNanos()).isEqualTo(Duration.ofSeconds(60).toNanos());
    assertThat(c.policy().routes().get(0).exempt()).isTrue();
    assertThat(c.policy().routes().get(0).paths()).containsExactly("/healthcheck");
    assertThat(c.cors().allowOrigins()).containsExactly("https://explorer.example.com");
    assertThat(c.trust().headers()).containsExactly("x-forwarded-for", "x-real-ip");

    PolicyConfig off = PolicyLoader.load(examples().resolve("seed-004-graphql.yaml"),
        Map.of("RATE_LIMIT_MAX", "0", "TRUST_PROXY", "2",
            "CORS_ORIGINS", "https://a.example, https://b.example")).config();
    assertThat(off.policy().rules().get("global").mode()).isEqualTo(Mode.OFF);
    assertThat(off.trust().hops()).isEqualTo(2);
    assertThat(off.cors().allowOrigins()).containsExactly("https://a.example", "https://b.example");
  }
}
