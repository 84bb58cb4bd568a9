package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The readings of a word: as written, every symbol read, and the part between letters read. */
class LeetTest {

  @Test
  void one_isReadAsIAndAsL() {
    assertThat(Leet.readings("k1ll")).containsExactly("k1ll", "kill", "klll");
  }

  @Test
  void trailingDigits_areDroppedInTheInnerReading() {
    assertThat(Leet.readings("h1tl3r88"))
        .containsExactly("h1tl3r88", "hitlerbb", "hltlerbb", "h1tl3r", "hitler", "hltler");
  }

  @Test
  void wordWithoutSymbols_hasOneReading() {
    assertThat(Leet.readings("bob")).containsExactly("bob");
    assertThat(Leet.readings("\u6771\u4EAC")).containsExactly("\u6771\u4EAC");
  }

  @Test
  void ambiguity_isBounded_atSixteenReadingsPerFamily() {
    assertThat(Leet.readings("a1b1c1d1e")).hasSize(1 + 16);
    // Five ambiguous symbols: all read as i, all read as l.
    assertThat(Leet.readings("1!1!1")).containsExactly("1!1!1", "iiiii", "lllll");
    assertThat(Leet.readings("x1".repeat(40)).size()).isLessThanOrEqualTo(1 + 2 + 1 + 2);
  }
}
