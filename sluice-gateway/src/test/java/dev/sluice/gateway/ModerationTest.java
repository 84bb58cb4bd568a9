package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.moderation.Surface;
import dev.sluice.moderation.SurfaceRules;
import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ModerationSettings;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.SurfaceSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The moderation section built into a Moderator: its lists read relative to the policy file,
 * what only the moderation library can judge reported at the file and line the loader would use
 * ({@link Moderation#check}, which sluice-server's {@code Policies.load} runs on every load), and
 * the policy's plain values kept equal to the library's.
 */
class ModerationTest {

  @TempDir
  Path dir;

  private Path policy(String... moderation) throws Exception {
    Path file = dir.resolve("p.yaml");
    Files.writeString(file, String.join("\n", "websocket:", "  actionField: type", "moderation:")
        + "\n" + String.join("\n", moderation) + "\n", StandardCharsets.UTF_8);
    return file;
  }

  private static ModerationSettings load(Path file) throws Exception {
    return PolicyLoader.load(file, Map.of()).config().moderation();
  }

  private static List<String> errors(Path file) throws Exception {
    return Moderation.check(load(file)).stream().map(ConfigError::toString).toList();
  }

  @Test
  void section_buildsTheModerator_fromTheListsAndSurfaceRules() throws Exception {
    Files.writeString(dir.resolve("blocked.txt"), "frack\n", StandardCharsets.UTF_8);
    Path file = policy(
        "  lists: .",
        "  surfaces:",
        "    room_name: {maxLength: 40, scripts: any}",
        "  http:",
        "    - paths: [/api/players/**]",
        "      fields: {username: username}",
        "  websocket:",
        "    - action: SEND_REACTION",
        "      fields: {emoji: reaction}");
    ModerationSettings settings = load(file);
    assertThat(Moderation.check(settings)).isEmpty();
    Moderation m = Moderation.of(settings);
    assertThat(m.moderator().check("fr4ck", Surface.USERNAME).reason().label())
        .isEqualTo("blocked_term");
    assertThat(m.moderator().check("x".repeat(41), Surface.ROOM_NAME).reason().label())
        .isEqualTo("too_long");
    assertThat(m.moderator().check("x".repeat(40), Surface.ROOM_NAME).allowed()).isTrue();
    assertThat(m.http().get("moderation-0")).containsEntry("username", Surface.USERNAME);
    assertThat(m.websocket().get("SEND_REACTION")).containsEntry("emoji", Surface.REACTION);
  }

  /** The gateway runs the Moderator the load built: a list edited since is read on the next load. */
  @Test
  void theGateway_runsTheModeratorTheLoadBuilt() throws Exception {
    Path blocked = dir.resolve("blocked.txt");
    Files.writeString(blocked, "frack\n", StandardCharsets.UTF_8);
    Path file = policy("  lists: .", "  http:", "    - paths: [/x]", "      fields: {u: username}");
    ModerationSettings loaded = load(file);
    Moderation.Cache cache = new Moderation.Cache();
    assertThat(cache.check(loaded)).isEmpty();
    Files.writeString(blocked, "zorp\n", StandardCharsets.UTF_8);
    Moderation m = cache.of(loaded);
    assertThat(m).isSameAs(cache.of(loaded));
    assertThat(m.moderator().check("frack", Surface.USERNAME).allowed()).isFalse();
    assertThat(m.moderator().check("zorp", Surface.USERNAME).allowed()).isTrue();
    // Another server's cache, or none, reads the lists as they are now.
    assertThat(new Moderation.Cache().of(loaded).moderator().check("zorp", Surface.USERNAME)
        .allowed()).isFalse();
    ModerationSettings reloaded = load(file);
    assertThat(cache.check(reloaded)).isEmpty();
    assertThat(cache.of(reloaded).moderator().check("zorp", Surface.USERNAME).allowed())
        .isFalse();
  }

  @Test
  void noSection_buildsNothing() {
    Moderation m = Moderation.of(ModerationSettings.none());
    assertThat(m.moderator()).isNull();
    assertThat(m.http()).isEmpty();
  }

  @Test
  void listsDirectory_isResolvedAgainstThePolicyFile_andMustExist() throws Exception {
    Path file = policy("  lists: nope");
    assertThat(errors(file)).containsExactly(
        file + ":4: moderation.lists : \"" + dir.resolve("nope") + "\" (expected: a directory)");
  }

  @Test
  void badListEntry_isReportedAtTheListFilesLine() throws Exception {
    Path blocked = dir.resolve("blocked.txt");
    Files.writeString(blocked, "# ours\nfine\n***\n", StandardCharsets.UTF_8);
    assertThat(errors(policy("  lists: .", "  http:", "    - paths: [/x]",
        "      fields: {u: username}"))).containsExactly(
        blocked + ":3: moderation.lists : \"***\" (expected: a term, or *term* to match inside "
            + "words too)");
  }

  @Test
  void badSeparators_areReportedAtTheirLine() throws Exception {
    Path file = policy("  surfaces:", "    display_name:", "      separators: ab");
    assertThat(errors(file)).containsExactly(file + ":6: moderation.surfaces.display_name"
        + ".separators : \"ab\" (expected: up to 32 punctuation or symbol characters)");
  }

  /** The policy writes the surfaces and their defaults as plain values: they stay the library's. */
  @Test
  void policysSurfaceNamesAndDefaults_areTheModerationLibrarys() {
    assertThat(ModerationSettings.SURFACES).containsExactlyElementsOf(
        Arrays.stream(Surface.values()).map(Surface::label).toList());
    for (String name : SurfaceSettings.NAMES) {
      assertThat(Moderation.rules(name, SurfaceSettings.defaults(name)))
          .isEqualTo(SurfaceRules.of(Moderation.surface(name)));
    }
    assertThat(SurfaceSettings.SCRIPTS).containsExactlyElementsOf(
        Arrays.stream(SurfaceRules.Scripts.values()).map(s -> s.name().toLowerCase()).toList());
  }
}
