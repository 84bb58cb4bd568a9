package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.InvalidValueException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Lists from code and from files: every bad entry named by where it is, what it is, the rule. */
class ListsTest {

  @TempDir
  Path dir;

  @Test
  void badEntry_fromCode_isNamedByListAndIndex() {
    Moderator.Builder b = Moderator.builder();
    assertThatThrownBy(() -> b.blocked(List.of("ok", "--")))
        .isInstanceOf(InvalidValueException.class)
        .hasMessage("blocked[1] : \"--\" (expected: at least one letter or digit)");
    assertThatThrownBy(() -> b.blocked(List.of("*x")))
        .hasMessage("blocked[0] : \"*x\" (expected: a term, or *term* to match inside words too)");
    assertThatThrownBy(() -> b.reserved(List.of("*admin*")))
        .hasMessage("reserved[0] : \"*admin*\" (expected: a word, without '*')");
    assertThatThrownBy(() -> b.blocked(List.of("bad\u202Eword")))
        .hasMessage("blocked[0] : \"bad\\u202Eword\" (expected: no control, invisible or "
            + "unassigned characters)");
    assertThatThrownBy(() -> b.blocked(List.of("x".repeat(65))))
        .hasMessageEndingWith("(expected: at most 64 letters and digits)");
    assertThatThrownBy(() -> b.palette(List.of("\uD83D\uDC4D", "thumbs up")))
        .hasMessage("palette[1] : \"thumbs up\" (expected: one emoji sequence (or short word) of "
            + "1..64 UTF-16 units, without spaces or controls)");
    assertThatThrownBy(() -> b.blocked(null)).hasMessage("blocked : null (expected: a collection "
        + "of entries)");
  }

  @Test
  void allowedWord_thatIsATerm_failsTheBuild() {
    assertThatThrownBy(() -> Moderator.builder().blocked(List.of("fuck"))
        .allowed(List.of("FUUCK")).build())
        .hasMessage("allowed[0] : \"FUUCK\" (expected: a word that is not itself a blocked or "
            + "reserved term (fuck))");
  }

  @Test
  void files_replaceTheirLists_missingFilesKeepTheBuiltIn() throws IOException {
    write("blocked.txt", "\uFEFF# my list\n\n  frack  \n*gorram*\n");
    write("palette.txt", "# reactions\n#\uFE0F\u20E3\n\uD83D\uDE80\n");
    Moderator m = Moderator.builder().lists(dir).build();
    assertThat(m.check("Frack", Surface.DISPLAY_NAME).matchedTerm()).contains("frack");
    assertThat(m.check("xgorramx", Surface.DISPLAY_NAME).matchedTerm()).contains("gorram");
    assertThat(m.check("fuck", Surface.DISPLAY_NAME).allowed()).isTrue();
    assertThat(m.check("admin", Surface.DISPLAY_NAME).reason()).isEqualTo(Reason.RESERVED);
    assertThat(m.check("#\uFE0F\u20E3", Surface.REACTION).allowed()).isTrue();
    assertThat(m.check("\uD83D\uDC4D", Surface.REACTION).allowed()).isFalse();
  }

  @Test
  void emptyFile_emptiesItsList() throws IOException {
    write("reserved.txt", "# nothing reserved here\n");
    Moderator m = Moderator.builder().lists(dir).build();
    assertThat(m.check("admin", Surface.DISPLAY_NAME).allowed()).isTrue();
  }

  @Test
  void badEntry_inAFile_isNamedByFileAndLine() throws IOException {
    write("blocked.txt", "fine\n# comment\n!!!\n");
    assertThatThrownBy(() -> Moderator.builder().lists(dir))
        .isInstanceOf(InvalidValueException.class)
        .hasMessage(dir.resolve("blocked.txt") + ":3 : \"!!!\" (expected: at least one letter "
            + "or digit)");
  }

  @Test
  void fileThatIsNotUtf8_isNamedByFileAndLine() throws IOException {
    Files.write(dir.resolve("reserved.txt"), new byte[] {'a', '\n', (byte) 0xC3, '(', '\n'});
    assertThatThrownBy(() -> Moderator.builder().lists(dir))
        .hasMessage(dir.resolve("reserved.txt") + ":2 : bytes (expected: UTF-8 text)");
  }

  @Test
  void directory_mustExist_andHoldAList() {
    assertThatThrownBy(() -> Moderator.builder().lists(dir.resolve("nope")))
        .hasMessage("lists : " + dir.resolve("nope") + " (expected: a directory)");
    assertThatThrownBy(() -> Moderator.builder().lists(dir))
        .hasMessage("lists : " + dir + " (expected: a directory with blocked.txt, reserved.txt, "
            + "allowed.txt or palette.txt)");
  }

  @Test
  void builtInLists_parse_andBlockTheirOwnTerms() {
    Moderator m = Moderator.builder().build();
    for (String list : List.of(Lists.BLOCKED, Lists.RESERVED)) {
      for (Lists.Entry e : Lists.builtIn(list)) {
        Lists.Parsed p = Lists.term(e, true);
        Ruling r = m.check(p.written, Surface.DISPLAY_NAME);
        assertThat(r.allowed()).as("%s %s", e.where, r).isFalse();
      }
    }
  }

  @Test
  void shortTermLength_decidesWhetherATermIsFoundInsideASegment() {
    Moderator four = Moderator.builder().blocked(List.of("nazi")).build();
    Moderator three = Moderator.builder().blocked(List.of("nazi")).shortTermLength(3).build();
    assertThat(four.check("x#nazi#x", Surface.DISPLAY_NAME).allowed()).isTrue();
    assertThat(three.check("x#nazi#x", Surface.DISPLAY_NAME).matchedTerm()).contains("nazi");
    assertThatThrownBy(() -> Moderator.builder().shortTermLength(-1))
        .hasMessage("shortTermLength : -1 (expected: 0..64)");
  }

  private void write(String name, String text) throws IOException {
    Files.write(dir.resolve(name), text.getBytes(StandardCharsets.UTF_8));
  }
}
