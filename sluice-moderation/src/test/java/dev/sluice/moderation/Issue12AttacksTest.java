package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The attacks issue 12 lists, one by one, against a reserved {@code paypal}. */
class Issue12AttacksTest {

  private final Moderator moderator = Moderator.builder()
      .reserved(List.of("paypal", "admin"))
      .blocked(List.of("nazi", "ass"))
      .palette(List.of("\uD83D\uDC4D", "\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67",
          "\uD83C\uDDEB\uD83C\uDDF7"))
      .build();

  @ParameterizedTest
  @ValueSource(strings = {
      "p\u0430ypal",                                   // Cyrillic a
      "PAYPAL",                                        // all caps
      "\uFF50\uFF41\uFF59\uFF50\uFF41\uFF4C",          // fullwidth
      "\uD835\uDC29\uD835\uDC1A\uD835\uDC32\uD835\uDC29\uD835\uDC1A\uD835\uDC25", // math bold
      "pay\u200Bpal",                                  // zero-width space inside
      "paypa1", "p4yp4l", "p@yp@l", "pay-pal", "pay_pal"})
  void disguisedPaypal_isRefusedAsAUsername(String name) {
    Ruling r = moderator.check(name, Surface.USERNAME);
    assertThat(r.allowed()).as(name).isFalse();
    assertThat(r.reason()).as(name).isIn(Reason.RESERVED, Reason.MIXED_SCRIPTS,
        Reason.INVISIBLE_CHARACTERS, Reason.INVALID_CHARACTERS);
  }

  @ParameterizedTest
  @ValueSource(strings = {"PAYPAL", "paypa1", "p4yp4l", "p@yp@l", "pay-pal", "pay_pal",
      "\uFF50\uFF41\uFF59\uFF50\uFF41\uFF4C"})
  void disguisedPaypal_asADisplayName_isTheReservedWord(String name) {
    Ruling r = moderator.check(name, Surface.DISPLAY_NAME);
    assertThat(r.reason()).as(name).isEqualTo(Reason.RESERVED);
    assertThat(r.matchedTerm()).as(name).contains("paypal");
  }

  @Test
  void superscriptLetters_foldOntoABlockedWord() {
    Ruling r = moderator.check("\u207F\u1D43\u1DBB\u2071", Surface.DISPLAY_NAME); // ⁿᵃᶻⁱ
    assertThat(r.allowed()).isFalse();
    assertThat(r.reason()).isEqualTo(Reason.BLOCKED_TERM);
    assertThat(r.matchedTerm()).contains("nazi");
  }

  @Test
  void bidiOverride_andOnlyZeroWidthSpaces_areRefused() {
    assertThat(moderator.check("admin\u202Enimda", Surface.USERNAME).reason())
        .isEqualTo(Reason.CONTROL_CHARACTERS);
    Ruling invisible = moderator.check("\u200B\u200B\u200B", Surface.DISPLAY_NAME);
    assertThat(invisible.allowed()).isFalse();
  }

  @Test
  void reactions_familyAndFlagPass_textDoesNot() {
    assertThat(moderator.check("\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67",
        Surface.REACTION).allowed()).isTrue();
    assertThat(moderator.check("\uD83C\uDDEB\uD83C\uDDF7", Surface.REACTION).allowed()).isTrue();
    assertThat(moderator.check("lol", Surface.REACTION).reason())
        .isEqualTo(Reason.NOT_IN_PALETTE);
  }

  @Test
  void seedBoundaryRules_shortTermsWholeSegments_longTermsNotTouchingLetters() {
    // A short term inside a longer word is not blocked ("ass" in "class", "assassin").
    assertThat(moderator.check("class", Surface.USERNAME).allowed()).isTrue();
    assertThat(moderator.check("assassin", Surface.DISPLAY_NAME).allowed()).isTrue();
    // As a whole segment it is.
    assertThat(moderator.check("big-ass", Surface.USERNAME).allowed()).isFalse();
    // A long term touching letters is not blocked; bounded by digits or punctuation it is.
    assertThat(moderator.check("xpaypalx", Surface.DISPLAY_NAME).allowed()).isTrue();
    assertThat(moderator.check("paypal99", Surface.DISPLAY_NAME).allowed()).isFalse();
    assertThat(moderator.check("the.paypal.team", Surface.DISPLAY_NAME).allowed()).isFalse();
  }

  @Test
  void ordinaryNamesInOneScript_pass() {
    for (String name : List.of("Scunthorpe", "\u0391\u03BB\u03AD\u03BE\u03B1\u03BD\u03B4\u03C1\u03BF\u03C2",
        "\u0410\u043D\u043D\u0430", "\u0645\u062D\u0645\u062F", "\u738B\u5C0F\u660E",
        "\u3055\u304F\u3089")) {
      assertThat(moderator.check(name, Surface.DISPLAY_NAME).allowed()).as(name).isTrue();
    }
  }
}
