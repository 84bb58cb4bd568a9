package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.InvalidValueException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Seed 001's length and segmentation rules per surface, and the builder's checks. */
class SurfaceRulesTest {

  private static final Moderator M = Fixtures.MODERATOR;

  @Test
  void username_isThreeToTwentyCharacters() {
    assertThat(M.check("ab", Surface.USERNAME).reason()).isEqualTo(Reason.TOO_SHORT);
    assertThat(M.check("abc", Surface.USERNAME).allowed()).isTrue();
    assertThat(M.check("a".repeat(20), Surface.USERNAME).allowed()).isTrue();
    assertThat(M.check("a".repeat(21), Surface.USERNAME).reason()).isEqualTo(Reason.TOO_LONG);
  }

  @Test
  void length_countsGraphemeClusters_notCodeUnits() {
    // Three family emoji of 11 code units each, and "e" + combining acute: 3 and 3 clusters.
    String family = "\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67\u200D\uD83D\uDC66";
    SurfaceRules three = SurfaceRules.builder(Surface.DISPLAY_NAME).maxLength(3).build();
    Moderator m = Moderator.builder().rules(three).build();
    assertThat(m.check(family.repeat(3), Surface.DISPLAY_NAME).allowed()).isTrue();
    assertThat(m.check(family.repeat(4), Surface.DISPLAY_NAME).reason())
        .isEqualTo(Reason.TOO_LONG);
    assertThat(m.check("e\u0301e\u0301e\u0301", Surface.DISPLAY_NAME).allowed()).isTrue();
  }

  @Test
  void length_ignoresSurroundingAndRepeatedWhitespace() {
    assertThat(M.check("  abc", Surface.USERNAME).reason()).isEqualTo(Reason.INVALID_CHARACTERS);
    Ruling r = M.check("   Bob    Smith  ", Surface.DISPLAY_NAME);
    assertThat(r.allowed()).isTrue();
    assertThat(r.normalized()).isEqualTo("bob srnith");
  }

  @Test
  void roomName_mayBeEmpty_butNotOneOrTwoCharacters() {
    assertThat(M.check("", Surface.ROOM_NAME).allowed()).isTrue();
    assertThat(M.check("   ", Surface.ROOM_NAME).allowed()).isTrue();
    assertThat(M.check("ab", Surface.ROOM_NAME).reason()).isEqualTo(Reason.TOO_SHORT);
    assertThat(M.check("x".repeat(50), Surface.ROOM_NAME).allowed()).isTrue();
    assertThat(M.check("x".repeat(51), Surface.ROOM_NAME).reason()).isEqualTo(Reason.TOO_LONG);
  }

  @Test
  void displayName_mayNotBeEmpty() {
    assertThat(M.check("", Surface.DISPLAY_NAME).reason()).isEqualTo(Reason.TOO_SHORT);
    assertThat(M.check(" ", Surface.DISPLAY_NAME).reason()).isEqualTo(Reason.TOO_SHORT);
  }

  @Test
  void hugeInput_isRefusedBeforeAnyWork() {
    Ruling r = M.check("a".repeat(1_000_000), Surface.DISPLAY_NAME);
    assertThat(r.reason()).isEqualTo(Reason.TOO_LONG);
    assertThat(r.normalized()).isEmpty();
  }

  @Test
  void separators_splitSegments_perSurface() {
    // '.' splits display names, not usernames (where it is not even allowed).
    assertThat(M.check("x.ass.x", Surface.DISPLAY_NAME).matchedTerm()).contains("ass");
    assertThat(M.check("x.ass.x", Surface.USERNAME).reason())
        .isEqualTo(Reason.INVALID_CHARACTERS);
    assertThat(M.check("x_ass_x", Surface.USERNAME).matchedTerm()).contains("ass");
    // '!' splits room names only.
    assertThat(M.check("x!ass!x", Surface.ROOM_NAME).matchedTerm()).contains("ass");
    assertThat(M.check("x!ass!x", Surface.DISPLAY_NAME).allowed()).isTrue();
  }

  @Test
  void customSeparators_andIdentifierSwitch() {
    SurfaceRules rules = SurfaceRules.builder(Surface.USERNAME)
        .separators("-_.").identifier(false).maxLength(30).build();
    Moderator m = Moderator.builder().blocked(Fixtures.BLOCKED).rules(rules).build();
    assertThat(m.check("bob.ass", Surface.USERNAME).matchedTerm()).contains("ass");
    assertThat(m.check("bob smith", Surface.USERNAME).allowed()).isTrue();
  }

  @Test
  void scripts_single_refusesLatinWithHan_any_allowsLatinWithCyrillic() {
    Moderator single = Moderator.builder().rules(SurfaceRules.builder(Surface.DISPLAY_NAME)
        .scripts(SurfaceRules.Scripts.SINGLE).build()).build();
    assertThat(single.check("Tokyo\u6771\u4EAC", Surface.DISPLAY_NAME).reason())
        .isEqualTo(Reason.MIXED_SCRIPTS);
    Moderator any = Moderator.builder().rules(SurfaceRules.builder(Surface.DISPLAY_NAME)
        .scripts(SurfaceRules.Scripts.ANY).build()).build();
    assertThat(any.check("Ivan \u0418\u0432\u0430\u043D", Surface.DISPLAY_NAME).allowed())
        .isTrue();
  }

  @Test
  void defaults_areSeed001s() {
    assertThat(SurfaceRules.of(Surface.ROOM_NAME).toString()).isEqualTo("room_name{length=3..50, "
        + "separators=\"-_.!\", allowEmpty=true, identifier=false, scripts=MODERATELY_RESTRICTIVE}");
    assertThat(SurfaceRules.of(Surface.USERNAME).separators()).isEqualTo("-_");
    assertThat(SurfaceRules.of(Surface.USERNAME).toBuilder().build())
        .isEqualTo(SurfaceRules.of(Surface.USERNAME));
  }

  @Test
  void builder_namesTheField_theValue_andTheRule() {
    SurfaceRules.Builder b = SurfaceRules.builder(Surface.DISPLAY_NAME);
    assertThatThrownBy(() -> b.minLength(0)).isInstanceOf(InvalidValueException.class)
        .hasMessage("minLength : 0 (expected: 1..256)");
    assertThatThrownBy(() -> b.maxLength(257)).hasMessage("maxLength : 257 (expected: 1..256)");
    assertThatThrownBy(() -> b.separators("a-"))
        .hasMessage("separators : \"a-\" (expected: up to 32 punctuation or symbol characters)");
    assertThatThrownBy(() -> b.minLength(10).maxLength(5).build())
        .hasMessage("maxLength : 5 (expected: >= minLength 10)");
    assertThatThrownBy(() -> SurfaceRules.builder(Surface.REACTION))
        .hasMessage("surface : REACTION (expected: USERNAME, DISPLAY_NAME or ROOM_NAME; "
            + "reactions are checked against the palette)");
    InvalidValueException e = (InvalidValueException) org.assertj.core.api.Assertions
        .catchThrowable(() -> b.maxLength(-1));
    assertThat(List.of(e.field(), e.value(), e.expected()))
        .containsExactly("maxLength", "-1", "1..256");
  }
}
