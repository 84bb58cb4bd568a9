package dev.sluice.server.cli;

import static dev.sluice.server.cli.MainTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.Main;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice moderate}: one line per text, exit 0 / 1 / 2. */
class ModerateCommandTest {

  @TempDir
  Path dir;

  @Test
  void allowedTexts_exit0_oneLineEach() {
    MainTest.Run r = run(Map.of(), "moderate", "Zo\u00EB", "Bob Smith");
    assertThat(r.code()).isEqualTo(Main.OK);
    assertThat(r.out()).isEqualTo("\"Zo\u00EB\" allowed (normalized \"zo\u00EB\")\n"
        + "\"Bob Smith\" allowed (normalized \"bob srnith\")\n");
    assertThat(r.err()).isEmpty();
  }

  @Test
  void anyRefusal_exit1_withReasonTermAndNormalizedForm() {
    MainTest.Run r = run(Map.of(), "moderate", "--surface", "username", "alice", "4dm1n",
        "p\u0430ypa", "bob\u202Eevil");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).isEqualTo("\"alice\" allowed (normalized \"alice\")\n"
        + "\"4dm1n\" rejected reserved \"admin\" (normalized \"4drnln\")\n"
        + "\"p\u0430ypa\" rejected mixed_scripts (normalized \"paypa\")\n"
        + "\"bob\\u202Eevil\" rejected control_characters (normalized \"bobevil\")\n");
  }

  @Test
  void surfaces_byLabel_andReactions() {
    assertThat(run(Map.of(), "moderate", "--surface=room-name", "").code()).isEqualTo(0);
    MainTest.Run r = run(Map.of(), "moderate", "--surface", "reaction", "\uD83D\uDC4D", "lol");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).isEqualTo("\"\uD83D\uDC4D\" allowed (normalized \"\uD83D\uDC4D\")\n"
        + "\"lol\" rejected not_in_palette (normalized \"lol\")\n");
  }

  @Test
  void listsDirectory_replacesTheBuiltInLists() throws Exception {
    Files.writeString(dir.resolve("blocked.txt"), "# ours\nfrack\n", StandardCharsets.UTF_8);
    MainTest.Run r = run(Map.of(), "moderate", "--lists", dir.toString(), "fr4ck", "fuck");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).isEqualTo("\"fr4ck\" rejected blocked_term \"frack\" (normalized "
        + "\"fr4ck\")\n\"fuck\" allowed (normalized \"fuck\")\n");
  }

  @Test
  void invalidListFile_exit2_namingFileAndLine() throws Exception {
    Path blocked = dir.resolve("blocked.txt");
    Files.writeString(blocked, "ok\n--\n", StandardCharsets.UTF_8);
    MainTest.Run r = run(Map.of(), "moderate", "--lists", dir.toString(), "bob");
    assertThat(r.code()).isEqualTo(Main.INVALID_POLICY).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo("sluice: invalid moderation lists: " + blocked
        + ":2 : \"--\" (expected: at least one letter or digit)\n");
  }

  @Test
  void textsStartingWithDashes_afterDoubleDash() {
    MainTest.Run r = run(Map.of(), "moderate", "--", "--bob--");
    assertThat(r.code()).isEqualTo(0);
    assertThat(r.out()).startsWith("\"--bob--\" allowed");
  }

  @Test
  void usageErrors_exit2() {
    assertThat(run(Map.of(), "moderate").err()).isEqualTo("sluice: moderate needs at least one "
        + "TEXT (see sluice moderate --help)\n");
    assertThat(run(Map.of(), "moderate", "--surface", "chat", "x").err()).startsWith(
        "sluice: --surface : \"chat\" (expected: username, display-name, room-name or "
            + "reaction)\n");
    assertThat(run(Map.of(), "moderate", "--colour", "x").code()).isEqualTo(2);
    assertThat(run(Map.of(), "moderate").code()).isEqualTo(2);
    assertThat(run(Map.of(), "moderate", "x", "--lists").err())
        .startsWith("sluice: --lists needs a value");
  }
}
