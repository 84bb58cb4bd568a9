package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The policy's moderation section: plain settings, the effective tree and errors at their lines.
 * The lists and the Moderator built from these are the gateway's ({@code ModerationTest}).
 */
class ModerationSectionTest {

  @TempDir
  Path dir;

  private static String policy(String... moderation) {
    return String.join("\n", "websocket:", "  actionField: type", "moderation:")
        + "\n" + String.join("\n", moderation) + "\n";
  }

  private List<String> errors(String yaml, Path source) {
    try {
      PolicyLoader.parse(yaml, "p.yaml", source, Map.of());
    } catch (ConfigException e) {
      return e.errors().stream().map(ConfigError::toString).toList();
    }
    throw new AssertionError("expected the policy to be rejected");
  }

  @Test
  void absentSection_moderatesNothing() throws Exception {
    LoadedPolicy p = PolicyLoader.parse("routes: []\n", "p.yaml", null, Map.of());
    assertThat(p.config().moderation().enabled()).isFalse();
    assertThat(p.effective()).doesNotContainKey("moderation");
  }

  @Test
  void section_givesRoutesFieldsAndRules_andShowsInTheEffectivePolicy() throws Exception {
    Path file = dir.resolve("p.yaml");
    LoadedPolicy p = PolicyLoader.parse(policy(
        "  lists: .",
        "  surfaces:",
        "    room_name: {maxLength: 40, scripts: any}",
        "  http:",
        "    - paths: [/api/players/**]",
        "      fields: {username: username}",
        "  websocket:",
        "    - action: SEND_REACTION",
        "      fields: {emoji: reaction}"), file.toString(), file, Map.of());
    ModerationSettings m = p.config().moderation();
    assertThat(m.enabled()).isTrue();
    assertThat(m.listsDirectory()).isEqualTo(dir);
    assertThat(m.listsAt()).isEqualTo(new ModerationSettings.Where(file.toString(), 4,
        "moderation.lists"));
    assertThat(m.surfaces().get("room_name")).isEqualTo(new SurfaceSettings(3, 40, "-_.!", true,
        false, "any", null));
    assertThat(m.http()).containsOnlyKeys("moderation-0");
    assertThat(m.http().get("moderation-0")).containsEntry("username", "username");
    assertThat(m.websocket().get("SEND_REACTION")).containsEntry("emoji", "reaction");
    assertThat(PolicyFormat.toYaml(p.effective())).contains("moderation:\n  lists: .\n"
        + "  shortTermLength: 4\n  surfaces:\n    room_name:\n      minLength: 3\n"
        + "      maxLength: 40\n");
  }

  @Test
  void badValues_areReportedAtTheirLines() {
    assertThat(errors(policy(
        "  surfaces:",
        "    room_name: {maxLength: 0}",
        "    chat: {}",
        "  http:",
        "    - fields: {username: nickname}",
        "  websocket:",
        "    - fields: {}"), null)).containsExactly(
        "p.yaml:5: moderation.surfaces.room_name.maxLength : 0 (expected: 1..256)",
        "p.yaml:6: moderation.surfaces.chat : unknown key (expected: one of username, "
            + "display_name, room_name)",
        "p.yaml:8: moderation.http[0].paths : none (expected: at least one path pattern)",
        "p.yaml:8: moderation.http[0].fields.username : \"nickname\" (expected: one of "
            + "username, display_name, room_name, reaction)",
        "p.yaml:8: moderation.http[0].fields : empty (expected: JSON field names mapped to "
            + "surfaces, like {username: username})",
        "p.yaml:10: moderation.websocket[0].fields : empty (expected: JSON field names mapped "
            + "to surfaces, like {username: username})");
  }

  @Test
  void action_needsTheActionField() {
    assertThat(errors(String.join("\n", "moderation:", "  websocket:",
        "    - {action: SET_NAME, fields: {name: display_name}}", ""), null)).containsExactly(
        "p.yaml:3: moderation.websocket[0].action : \"SET_NAME\" (expected: websocket.actionField "
            + "to be set too (the JSON field naming the action, like type))");
  }

  @Test
  void lengths_areCheckedTogether_andWrittenSeparatorsKeepTheirLine() throws Exception {
    assertThat(errors(policy("  surfaces:", "    username: {minLength: 9, maxLength: 8}"), null))
        .containsExactly("p.yaml:5: moderation.surfaces.username.maxLength : 8 (expected: "
            + ">= minLength 9)");
    LoadedPolicy p = PolicyLoader.parse(policy("  surfaces:", "    display_name:",
        "      separators: \"+\""), "p.yaml", null, Map.of());
    assertThat(p.config().moderation().surfaces().get("display_name").separatorsAt())
        .isEqualTo(new ModerationSettings.Where("p.yaml", 6,
            "moderation.surfaces.display_name.separators"));
  }

  @Test
  void listsDirectory_isResolvedAgainstThePolicyFile() throws Exception {
    Path file = dir.resolve("p.yaml");
    ModerationSettings m = PolicyLoader.parse(policy("  lists: sub/../nope"), file.toString(),
        file, Map.of()).config().moderation();
    assertThat(m.lists()).isEqualTo("sub/../nope");
    assertThat(m.listsDirectory()).isEqualTo(dir.resolve("nope"));
  }
}
