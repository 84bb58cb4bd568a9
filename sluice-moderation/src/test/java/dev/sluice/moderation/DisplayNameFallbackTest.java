package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Seed 001's lobby fallback: Adjective + Noun + 4 digits, 16 tries, deterministic under a seed. */
class DisplayNameFallbackTest {

  private static final Moderator M = Fixtures.MODERATOR;

  @Test
  void allowedName_isKeptAsProposed() {
    assertThat(M.displayName("  Zo\u00EB ", new SplittableRandom(1))).isEqualTo("  Zo\u00EB ");
  }

  @Test
  void refusedName_isReplaced_deterministicallyUnderASeed() {
    String a = M.displayName("fuck", new SplittableRandom(42));
    String b = M.displayName("fuck", new SplittableRandom(42));
    assertThat(a).isEqualTo(b).matches("[A-Z][a-z]+[A-Z][a-z]+[0-9]{4}");
    assertThat(M.displayName("n4zi", new SplittableRandom(43))).isNotEqualTo(a);
  }

  @Test
  void generatedNames_passTheModerator() {
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 2000; i++) {
      String name = M.displayName("\u202Eadmin", random);
      assertThat(M.check(name, Surface.DISPLAY_NAME).allowed()).as(name).isTrue();
    }
  }

  @Test
  void nullProposal_getsAGeneratedName() {
    assertThat(M.displayName(null, new SplittableRandom(3))).matches("[A-Za-z]+[0-9]{4}");
  }

  @Test
  void sixteenRefusals_fallBackToPlayerAndDigits() {
    // Every combination of these words is blocked, though each word passes alone.
    Moderator m = Moderator.builder().blocked(List.of("*redfox*"))
        .fallbackWords(List.of("Red"), List.of("Fox")).build();
    assertThat(m.displayName("RedFox", new SplittableRandom(5))).matches("Player[0-9]{4}");
  }

  @Test
  void fallbackWord_thatIsRefused_failsTheBuild() {
    assertThatThrownBy(() -> Moderator.builder().blocked(List.of("otter"))
        .fallbackWords(List.of("Brave"), List.of("Otter")).build())
        .hasMessage("fallbackNouns : \"Otter\" (expected: a word that passes as a display name; "
            + "refused: blocked_term)");
    assertThatThrownBy(() -> Moderator.builder().reserved(List.of("player")).build())
        .hasMessage("fallback : \"Player0000\" (expected: a word that passes as a display name; "
            + "refused: reserved)");
    assertThatThrownBy(() -> Moderator.builder().fallbackWords(List.of(), List.of("Fox")))
        .hasMessage("fallbackAdjectives : [] (expected: 1..10000 words)");
  }
}
