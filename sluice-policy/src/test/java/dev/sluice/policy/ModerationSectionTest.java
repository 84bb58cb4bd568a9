package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.moderation.Surface;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The policy's moderation section: settings, the effective tree and errors at their lines. */
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
  void section_buildsTheModerator_routesAndFields_andShowsInTheEffectivePolicy() throws Exception {
    Files.writeString(dir.resolve("blocked.txt"), "frack\n", StandardCharsets.UTF_8);
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
    assertThat(m.moderator().check("fr4ck", Surface.USERNAME).reason().label())
        .isEqualTo("blocked_term");
    assertThat(m.moderator().check("x".repeat(41), Surface.ROOM_NAME).reason().label())
        .isEqualTo("too_long");
    assertThat(m.http()).containsOnlyKeys("moderation-0");
    assertThat(m.websocket().get("SEND_REACTION")).containsEntry("emoji", Surface.REACTION);
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
  void listsDirectory_isResolvedAgainstThePolicyFile_andMustExist() {
    Path file = dir.resolve("p.yaml");
    assertThat(errors(policy("  lists: nope"), file)).containsExactly(
        "p.yaml:4: moderation.lists : \"" + dir.resolve("nope") + "\" (expected: a directory)");
  }

  @Test
  void badListEntry_isReportedAtTheListFilesLine() throws Exception {
    Path blocked = dir.resolve("blocked.txt");
    Files.writeString(blocked, "# ours\nfine\n***\n", StandardCharsets.UTF_8);
    assertThat(errors(policy("  lists: .", "  http:", "    - paths: [/x]",
        "      fields: {u: username}"), dir.resolve("p.yaml"))).containsExactly(
        blocked + ":3: moderation.lists : \"***\" (expected: a term, or *term* to match inside "
            + "words too)");
  }
}
