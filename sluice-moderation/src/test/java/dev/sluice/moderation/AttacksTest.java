package dev.sluice.moderation;

import static dev.sluice.moderation.Reason.BLOCKED_TERM;
import static dev.sluice.moderation.Reason.CONTROL_CHARACTERS;
import static dev.sluice.moderation.Reason.INVALID_CHARACTERS;
import static dev.sluice.moderation.Reason.INVISIBLE_CHARACTERS;
import static dev.sluice.moderation.Reason.MIXED_SCRIPTS;
import static dev.sluice.moderation.Reason.RESERVED;
import static dev.sluice.moderation.Surface.DISPLAY_NAME;
import static dev.sluice.moderation.Surface.ROOM_NAME;
import static dev.sluice.moderation.Surface.USERNAME;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every way of sneaking a term or an invisible trick past the lists: each must be refused. */
class AttacksTest {

  static Stream<Arguments> attacks() {
    return Stream.of(
        // Plain and cased.
        row("plain", USERNAME, "fuck", BLOCKED_TERM, "fuck"),
        row("upper case", USERNAME, "FUCK", BLOCKED_TERM, "fuck"),
        row("mixed case", DISPLAY_NAME, "FuCk", BLOCKED_TERM, "fuck"),
        // Compatibility forms: NFKC folds them to plain letters.
        row("fullwidth", USERNAME, "\uFF46\uFF55\uFF43\uFF4B", BLOCKED_TERM, "fuck"),
        row("math bold", USERNAME, "\uD835\uDC1F\uD835\uDC2E\uD835\uDC1C\uD835\uDC24",
            BLOCKED_TERM, "fuck"),
        row("circled", DISPLAY_NAME, "\u24D5\u24E4\u24D2\u24DA", BLOCKED_TERM, "fuck"),
        row("fullwidth reserved", USERNAME, "\uFF21\uFF24\uFF2D\uFF29\uFF2E", RESERVED, "admin"),
        // Confusables: UTS #39 skeletons, no hand-written table.
        row("armenian u", USERNAME, "f\u057Dck", BLOCKED_TERM, "fuck"),
        row("cyrillic a in reserved", USERNAME, "\u0430dmin", RESERVED, "admin"),
        row("all-cyrillic paypal", USERNAME, "\u0440\u0430\u0443\u0440\u0430\u04CF", RESERVED,
            "paypal"),
        row("mixed script, no term", USERNAME, "p\u0430ypa", MIXED_SCRIPTS, null),
        row("mixed script paypal", DISPLAY_NAME, "p\u0430yp\u0430l", RESERVED, "paypal"),
        row("latin and cyrillic words", DISPLAY_NAME, "Ivan \u0418\u0432\u0430\u043D",
            MIXED_SCRIPTS, null),
        row("two digit systems", DISPLAY_NAME, "agent 0\u0663", MIXED_SCRIPTS, null),
        row("accents", DISPLAY_NAME, "f\u00FCck", BLOCKED_TERM, "fuck"),
        row("combining accents", DISPLAY_NAME, "s\u0301h\u0300i\u0302t", BLOCKED_TERM, "shit"),
        row("dotless i", USERNAME, "sh\u0131t", BLOCKED_TERM, "shit"),
        // Leetspeak, and both readings of 1.
        row("digits for letters", USERNAME, "5h1t", BLOCKED_TERM, "shit"),
        row("symbols for letters", DISPLAY_NAME, "$h!t", BLOCKED_TERM, "shit"),
        row("1 read as l", USERNAME, "a55ho1e", BLOCKED_TERM, "asshole"),
        row("1 read as i", USERNAME, "k1ke", BLOCKED_TERM, "kike"),
        row("at sign", DISPLAY_NAME, "@$$", BLOCKED_TERM, "ass"),
        row("leet reserved", USERNAME, "4dm1n", RESERVED, "admin"),
        row("zero for o", USERNAME, "m0d", RESERVED, "mod"),
        row("leet inside a word", USERNAME, "n1gg3r", BLOCKED_TERM, "nigger"),
        row("digits term", USERNAME, "1488", BLOCKED_TERM, "1488"),
        // Repeated letters.
        row("stretched", USERNAME, "fuuuuuck", BLOCKED_TERM, "fuck"),
        row("stretched and leet", USERNAME, "sh1iiiit", BLOCKED_TERM, "shit"),
        row("stretched reserved", USERNAME, "aaadmin", RESERVED, "admin"),
        // Split words.
        row("dots", DISPLAY_NAME, "f.u.c.k", BLOCKED_TERM, "fuck"),
        row("spaces", DISPLAY_NAME, "f u c k", BLOCKED_TERM, "fuck"),
        row("underscores", USERNAME, "f_u_c_k", BLOCKED_TERM, "fuck"),
        row("hyphens in a room", ROOM_NAME, "s-h-i-t room", BLOCKED_TERM, "shit"),
        row("pairs", DISPLAY_NAME, "fu ck", BLOCKED_TERM, "fuck"),
        row("spaced inside a name", DISPLAY_NAME, "my n a z i club", BLOCKED_TERM, "nazi"),
        row("commas", DISPLAY_NAME, "f,u,c,k", BLOCKED_TERM, "fuck"),
        row("bang splits a room name", ROOM_NAME, "sh!t happens", BLOCKED_TERM, "shit"),
        row("phrase", DISPLAY_NAME, "kill yourself", BLOCKED_TERM, "kill yourself"),
        row("phrase squashed", USERNAME, "kill_your_self", BLOCKED_TERM, "kill yourself"),
        // Words inside segments.
        row("trailing digits", USERNAME, "nazi99", BLOCKED_TERM, "nazi"),
        row("leet and trailing digits", USERNAME, "h1tl3r88", BLOCKED_TERM, "hitler"),
        row("decorated", USERNAME, "xX_nazi_Xx", BLOCKED_TERM, "nazi"),
        row("short term with digits", USERNAME, "ass99", BLOCKED_TERM, "ass"),
        row("anywhere term", USERNAME, "xniggerx", BLOCKED_TERM, "nigger"),
        row("reserved segment", USERNAME, "admin_bob", RESERVED, "admin"),
        row("reserved room (seed 001)", ROOM_NAME, "Admin", RESERVED, "admin"),
        row("reserved in display name", DISPLAY_NAME, "Moderator Tom", RESERVED, "moderator"),
        // Invisible characters.
        row("zero-width space", USERNAME, "f\u200Buck", INVISIBLE_CHARACTERS, null),
        row("soft hyphen", DISPLAY_NAME, "ad\u00ADmin", INVISIBLE_CHARACTERS, null),
        row("word joiner", DISPLAY_NAME, "bob\u2060", INVISIBLE_CHARACTERS, null),
        row("hangul filler", DISPLAY_NAME, "\u3164", INVISIBLE_CHARACTERS, null),
        row("hangul filler padding", DISPLAY_NAME, "bob\u3164", INVISIBLE_CHARACTERS, null),
        row("braille blank", DISPLAY_NAME, "\u2800\u2800\u2800", INVISIBLE_CHARACTERS, null),
        row("byte order mark", USERNAME, "\uFEFFadmin", INVISIBLE_CHARACTERS, null),
        row("only joiners", DISPLAY_NAME, "\u200D\u200C\u200D", INVISIBLE_CHARACTERS, null),
        row("only a combining mark", DISPLAY_NAME, "\u0301\u0301", INVISIBLE_CHARACTERS, null),
        row("joiner inside a term", USERNAME, "f\u200Cuck", BLOCKED_TERM, "fuck"),
        // Controls and reordering (Trojan Source).
        row("right-to-left override", DISPLAY_NAME, "bob\u202Elive", CONTROL_CHARACTERS, null),
        row("isolate", DISPLAY_NAME, "\u2067bob\u2069", CONTROL_CHARACTERS, null),
        row("right-to-left mark", USERNAME, "bob\u200F", CONTROL_CHARACTERS, null),
        row("arabic letter mark", DISPLAY_NAME, "bob\u061C", CONTROL_CHARACTERS, null),
        row("nul", USERNAME, "bob\u0000", CONTROL_CHARACTERS, null),
        row("newline", DISPLAY_NAME, "bob\nadmin", CONTROL_CHARACTERS, null),
        row("tab", DISPLAY_NAME, "bob\tsmith", CONTROL_CHARACTERS, null),
        row("delete", USERNAME, "bob\u007F", CONTROL_CHARACTERS, null),
        row("c1 next line", DISPLAY_NAME, "bob\u0085", CONTROL_CHARACTERS, null),
        row("c1 csi", DISPLAY_NAME, "\u009B31mbob", CONTROL_CHARACTERS, null),
        row("line separator", DISPLAY_NAME, "bob\u2028smith", CONTROL_CHARACTERS, null),
        // Malformed and unassigned.
        row("lone surrogate", USERNAME, "bob\uD800", INVALID_CHARACTERS, null),
        row("private use", DISPLAY_NAME, "bob\uE000", INVALID_CHARACTERS, null),
        row("unassigned", DISPLAY_NAME, "bob\u0378", INVALID_CHARACTERS, null),
        row("noncharacter", DISPLAY_NAME, "bob\uFFFF", INVALID_CHARACTERS, null),
        row("interlinear annotation", DISPLAY_NAME, "bob\uFFF9x", INVALID_CHARACTERS, null),
        row("zalgo", DISPLAY_NAME, "bo\u0336\u0337\u0338\u0334\u0335\u0321b",
            INVALID_CHARACTERS, null),
        row("emoji in a username", USERNAME, "bob\uD83D\uDE00", INVALID_CHARACTERS, null),
        row("space in a username", USERNAME, "bob smith", INVALID_CHARACTERS, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("attacks")
  void attack_isRefused(String name, Surface surface, String text, Reason reason, String term) {
    Ruling r = Fixtures.MODERATOR.check(text, surface);
    assertThat(r.allowed()).as("%s", r).isFalse();
    assertThat(r.reason()).as("%s", r).isEqualTo(reason);
    assertThat(r.matchedTerm().orElse(null)).as("%s", r).isEqualTo(term);
    assertThat(r.surface()).isEqualTo(surface);
  }

  private static Arguments row(String name, Surface surface, String text, Reason reason,
      String term) {
    return Arguments.of(name, surface, text, reason, term);
  }
}
