package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Seed 001's reaction gap: the server now holds the palette, whole sequences counting as one. */
class ReactionsTest {

  private static final String THUMBS = "\uD83D\uDC4D";
  private static final String MEDIUM = "\uD83C\uDFFD";
  private static final String HEART = "\u2764";
  private static final String FAMILY =
      "\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67\u200D\uD83D\uDC66";
  private static final String FRANCE = "\uD83C\uDDEB\uD83C\uDDF7";
  private static final String KEYCAP_HASH = "#\uFE0F\u20E3";

  private static final Moderator M = Moderator.builder()
      .palette(List.of(THUMBS, HEART + "\uFE0F", FAMILY, FRANCE, KEYCAP_HASH)).build();

  @Test
  void paletteEntry_isAllowed_wholeSequencesAsOne() {
    for (String r : List.of(THUMBS, FAMILY, FRANCE, KEYCAP_HASH)) {
      assertThat(M.check(r, Surface.REACTION).allowed()).as(r).isTrue();
    }
  }

  @Test
  void presentationSelectors_doNotMatter() {
    assertThat(M.check(HEART, Surface.REACTION).allowed()).isTrue();
    assertThat(M.check(HEART + "\uFE0F", Surface.REACTION).allowed()).isTrue();
    assertThat(M.check(HEART + "\uFE0F", Surface.REACTION).normalized()).isEqualTo(HEART);
    assertThat(M.check(THUMBS + "\uFE0F", Surface.REACTION).allowed()).isTrue();
  }

  @Test
  void skinTone_onAModifierBase_isAllowed_aloneOrDoubled_isNot() {
    assertThat(M.check(THUMBS + MEDIUM, Surface.REACTION).allowed()).isTrue();
    assertThat(M.check(MEDIUM, Surface.REACTION).reason()).isEqualTo(Reason.NOT_IN_PALETTE);
    assertThat(M.check(THUMBS + MEDIUM + MEDIUM, Surface.REACTION).reason())
        .isEqualTo(Reason.NOT_IN_PALETTE);
    assertThat(M.check(HEART + MEDIUM, Surface.REACTION).reason())
        .isEqualTo(Reason.NOT_IN_PALETTE);
  }

  @Test
  void everythingElse_isRefused() {
    for (String r : List.of("fuck", "lol", THUMBS + THUMBS, " " + THUMBS, "\uD83C\uDDE9\uD83C\uDDEA",
        "\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67", "\uD83C\uDDEB", "#")) {
      assertThat(M.check(r, Surface.REACTION).reason()).as(r).isEqualTo(Reason.NOT_IN_PALETTE);
    }
  }

  @Test
  void emptyHugeAndControl_areRefusedWithTheirReason() {
    assertThat(M.check("", Surface.REACTION).reason()).isEqualTo(Reason.TOO_SHORT);
    assertThat(M.check(THUMBS.repeat(40), Surface.REACTION).reason()).isEqualTo(Reason.TOO_LONG);
    assertThat(M.check(THUMBS + "\u202E", Surface.REACTION).reason())
        .isEqualTo(Reason.CONTROL_CHARACTERS);
    assertThat(M.check(THUMBS + "\uE000", Surface.REACTION).reason())
        .isEqualTo(Reason.INVALID_CHARACTERS);
  }

  @Test
  void builtInPalette_hasSixteenReactions() {
    Moderator m = Moderator.builder().build();
    assertThat(m.check(THUMBS, Surface.REACTION).allowed()).isTrue();
    assertThat(m.check("\uD83C\uDFC6", Surface.REACTION).allowed()).isTrue();
    assertThat(m.check("\uD83D\uDCA9", Surface.REACTION).allowed()).isFalse();
  }
}
