package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The effective policy is rendered from the loaded model. Regression: it must stay byte for byte
 * what the hand-built tree of the server's loader printed (the goldens under
 * {@code src/test/resources/effective} were captured from {@code sluice check} before the move),
 * for every example, the embedded default and a file that sets every key of every section.
 */
class EffectivePolicyTest {

  private static final Path GOLDEN = Path.of("src/test/resources/effective");

  private static String golden(String name) throws Exception {
    return Files.readString(GOLDEN.resolve(name), StandardCharsets.UTF_8);
  }

  private static String yaml(LoadedPolicy p) {
    return PolicyFormat.toYaml(p.effective());
  }

  @Test
  void everyExample_rendersAsBeforeTheMove() throws Exception {
    for (String name : new String[] {"seed-000-default", "seed-001-game-server",
        "seed-002-pub-quiz", "seed-003-chat", "seed-004-graphql"}) {
      LoadedPolicy p = PolicyLoader.load(ExamplesTest.examples().resolve(name + ".yaml"),
          Map.of());
      assertThat(yaml(p)).as(name).isEqualTo(golden(name + ".yaml"));
    }
    assertThat(yaml(PolicyLoader.loadDefault(Map.of()))).isEqualTo(golden("default.yaml"));
  }

  @Test
  void everyKeyOfEverySection_rendersAsBeforeTheMove() throws Exception {
    Path sink = GOLDEN.resolve("sink/sink.yaml");
    assertThat(yaml(PolicyLoader.load(sink, Map.of()))).isEqualTo(golden("sink.effective.yaml"));
    assertThat(yaml(PolicyLoader.load(sink, Map.of("API_OFF", "0"))))
        .isEqualTo(golden("sink-off.effective.yaml"));
  }

  @Test
  void effectivePolicy_loadsBackToTheSameModel() throws Exception {
    Path sink = GOLDEN.resolve("sink/sink.yaml");
    LoadedPolicy p = PolicyLoader.load(sink, Map.of());
    LoadedPolicy again = PolicyLoader.parse(yaml(p), sink.toString(), sink, Map.of());
    assertThat(again.config().policy().rules().values().stream().map(Object::toString))
        .containsExactlyElementsOf(p.config().policy().rules().values().stream()
            .map(Object::toString).toList());
    assertThat(again.config().offSwitches()).isEqualTo(p.config().offSwitches())
        .isNotEmpty();
    assertThat(again.config().websocket()).isEqualTo(p.config().websocket());
    assertThat(again.config().cors()).isEqualTo(p.config().cors());
    assertThat(again.effective()).isEqualTo(p.effective());
  }

  /**
   * Rendered from core's rules now, not from a second tree "as written": a refill that core
   * rounds (7 per minute is one token per 8.571428572 s) still shows as the file gave it, for a
   * rule and for a human check's limit alike (the human check showed "refill: 1" before).
   */
  @Test
  void limits_renderAsGiven_fromCoresRules() throws Exception {
    LoadedPolicy p = PolicyLoader.parse(String.join("\n",
        "rules:",
        "  api: {limits: [{type: token-bucket, burst: 15, refill: 7, period: 1m}]}",
        "routes:",
        "  - {paths: [/api/**], rules: [api]}",
        ""), "p.yaml", null, Map.of());
    assertThat(yaml(p)).contains("  api:\n    key: ip\n    limits:\n    - type: token-bucket\n"
        + "      name: api\n      burst: 15\n      refill: 7\n      period: 1m\n");
    LoadedPolicy again = PolicyLoader.parse(yaml(p), "again.yaml", null, Map.of());
    assertThat(again.effective()).isEqualTo(p.effective());
    assertThat(again.config().policy().rules().get("api").limits().get(0).periodNanos())
        .isEqualTo(8_571_428_572L);
  }
}
