package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;

import com.ibm.icu.lang.UCharacter;
import com.ibm.icu.lang.UCharacterCategory;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** canon(canon(x)) == canon(x) for every input, and a check that never throws. */
class CanonProperties {

  private static final Moderator M = Fixtures.MODERATOR;

  /** canon as the API shows it: the normalised form of a display-name check. */
  private static String canon(String s) {
    return M.check(s, Surface.DISPLAY_NAME).normalized();
  }

  @Property(tries = 3000)
  void canon_isIdempotent(@ForAll("texts") String s) {
    String once = canon(s);
    assertThat(canon(once)).as("%s -> %s", Lists.quote(s), Lists.quote(once)).isEqualTo(once);
    String internal = Canon.normalized(Canon.fold(s));
    assertThat(Canon.normalized(Canon.fold(internal))).isEqualTo(internal);
  }

  @Property(tries = 3000)
  void matchingKey_isIdempotent(@ForAll("texts") String s) {
    String key = Canon.key(Canon.fold(s));
    assertThat(Canon.key(Canon.fold(key))).as("%s -> %s", Lists.quote(s), Lists.quote(key))
        .isEqualTo(key);
  }

  @Property(tries = 3000)
  void check_answersEveryText_onEverySurface(@ForAll("texts") String s) {
    for (Surface surface : Surface.values()) {
      Ruling r = M.check(s, surface);
      assertThat(r.allowed()).isEqualTo(r.reason() == Reason.NONE);
      assertThat(r.matchedTerm().isPresent())
          .isEqualTo(r.reason() == Reason.BLOCKED_TERM || r.reason() == Reason.RESERVED);
    }
  }

  @Property(tries = 1000)
  void aBlockedName_staysBlocked_whateverTheCase(@ForAll("texts") String s) {
    Ruling r = M.check(s, Surface.DISPLAY_NAME);
    if (r.reason() == Reason.BLOCKED_TERM) {
      assertThat(M.check(UCharacter.toUpperCase(s), Surface.DISPLAY_NAME).allowed()).isFalse();
    }
  }

  @Test
  void canon_isIdempotent_forEveryCodePoint_aloneAndWithAMark() {
    List<String> failures = new ArrayList<>();
    int checked = 0;
    for (int cp = 0; cp <= 0x10FFFF; cp++) {
      int type = UCharacter.getType(cp);
      if (type == UCharacterCategory.UNASSIGNED || type == UCharacterCategory.PRIVATE_USE
          || (cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0x20000 && cp <= 0x3FFFF)) {
        continue; // unified ideographs: 170,000 code points, each its own skeleton
      }
      String s = new String(Character.toChars(cp));
      checked++;
      for (String text : new String[] {s, s + "\u0301", "a" + s}) {
        String once = Canon.normalized(Canon.fold(text));
        if (!Canon.normalized(Canon.fold(once)).equals(once) && failures.size() < 20) {
          failures.add(Lists.quote(text) + " -> " + Lists.quote(once));
        }
      }
    }
    assertThat(failures).isEmpty();
    assertThat(checked).isGreaterThan(50_000); // about 61,000 in Unicode 17
  }

  @Provide
  Arbitrary<String> texts() {
    Arbitrary<String> piece = Arbitraries.oneOf(
        Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(8),
        Arbitraries.strings().withChars("\u0430\u0435\u043E\u0440\u0441\u0443\u0445\u0456\u0458"
            + "\u0455\u0501\u04BB\u04CF\u057D\u03BF\u03B1\u0131\u01C0\u2160\uFF41\u24D0")
            .ofMaxLength(4),
        Arbitraries.strings().withCharRange('\u0300', '\u036F').ofMaxLength(3),
        Arbitraries.strings().all().ofMaxLength(4),
        Arbitraries.integers().between(0, 0x10FFFF).map(cp -> new String(Character.toChars(cp))),
        Arbitraries.of("\u00DF", "\uFB01", "\u01C5", "\u0130", "\u03C2", "\u2126", "\u212A",
            "\u212B", "\uFDFA", "\u337F", "\uFF76\uFF9E", "\u0345", "\u1FB3", "\u200B", "\u200D",
            "\u202E", "\u3164", "\u2800", "\uD83D\uDC4D\uD83C\uDFFD", "\uFE0F", "1", "!", "|",
            "\u0663", "  ", "\t", "m", "rn", "\u0BCD", "\u0E31", "\u1100\u1161\u11A8"));
    return piece.list().ofMaxSize(6).map(l -> String.join("", l));
  }
}
