package dev.sluice.moderation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Ordinary names, in many scripts, and the Scunthorpe problem: none may be refused. */
class FalsePositivesTest {

  private static final Moderator BUILT_IN = Moderator.builder().build();

  @ParameterizedTest
  @ValueSource(strings = {
      // Latin with diacritics, apostrophes and hyphens.
      "Zo\u00EB", "Jos\u00E9 Mar\u00EDa", "M\u00FCller", "\u0141ukasz", "\u00D3lafur",
      "Fran\u00E7oise", "S\u00F8ren", "Anne-Marie", "John O'Neil", "Dr. Who", "Ng\u1EE5y\u1EC5n",
      "Nguye\u0302\u0303n Va\u0306n An", "\u0218tefan", "\u00C7a\u011Flar",
      // Other scripts, whole names.
      "\u0418\u0432\u0430\u043D \u041F\u0435\u0442\u0440\u043E\u0432", "\u041C\u0430\u0440\u0438\u044F",
      "\u03A3\u03C9\u03BA\u03C1\u03AC\u03C4\u03B7\u03C2", "\u0395\u03BB\u03AD\u03BD\u03B7",
      "\u0645\u062D\u0645\u062F \u0639\u0644\u064A", "\u05D3\u05D5\u05D3",
      "\u0930\u093E\u0939\u0941\u0932 \u0936\u0930\u094D\u092E\u093E", "\u0BA4\u0BAE\u0BBF\u0BB4\u0BCD",
      "\u0E2A\u0E21\u0E0A\u0E32\u0E22", "\uAE40\uCCA0\uC218", "\u6771\u4EAC\u592A\u90CE",
      "\u3055\u304F\u3089", "\u674E\u5C0F\u9F99", "\u10D2\u10D8\u10DD\u10E0\u10D2\u10D8",
      "\u0540\u0561\u0575\u056F", "\u1200\u12ED\u120C",
      // Scripts that may mix with Latin.
      "Tokyo\u6771\u4EAC", "Ahmed \u0623\u062D\u0645\u062F", "Kim \uAE40\uCCA0\uC218",
      // Persian and Indic words that need the zero-width joiners.
      "\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645", "\u0915\u094D\u200D\u0937",
      // Digits, numbers and emoji in a display name.
      "Player 1", "Team 42", "Bob \uD83D\uDE00", "\uD83D\uDC4D\uD83C\uDFFD Fan",
      "Scot \uD83C\uDFF4\uDB40\uDC67\uDB40\uDC62\uDB40\uDC73\uDB40\uDC63\uDB40\uDC74\uDB40\uDC7F",
      // Scunthorpe: blocked terms inside ordinary words and names.
      "Scunthorpe", "Scunthorpe United", "Penistone", "Cockburn", "Hancock", "Peacock",
      "Hitchcock", "Dickens", "Sussex", "Essex", "Middlesex", "Cassandra", "class", "assassin",
      "grass", "Bass Player", "Matsushita", "Shitake", "Titanic", "Analyst", "therapist",
      "Arsenal", "Nazareth", "Shitsu", "Assange", "The pen is mightier", "as", "Classic 99",
      "Kumar", "Admiral", "badminton", "Modern Art", "Hostess", "Supporter", "snigger",
      "sniggering"})
  void ordinaryName_isAllowed_byTheBuiltInLists(String name) {
    Ruling r = BUILT_IN.check(name, Surface.DISPLAY_NAME);
    assertThat(r.allowed()).as("%s", r).isTrue();
    Ruling room = BUILT_IN.check(name, Surface.ROOM_NAME);
    assertThat(room.allowed() || room.reason() == Reason.TOO_SHORT).as("%s", room).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"document", "cumulus", "circumstance", "cucumber", "Cumbria",
      "scum", "snigger", "Scunthorpe", "class", "Cassandra", "Hancock", "assassin"})
  void wordsHoldingAnAnywhereTerm_areAllowed_whenOnTheAllowList(String word) {
    Ruling r = Fixtures.MODERATOR.check(word, Surface.DISPLAY_NAME);
    assertThat(r.allowed()).as("%s", r).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"alice", "bob_99", "x-ray", "Zo\u00EB", "\u0418\u0432\u0430\u043D",
      "\u6771\u4EAC\u592A\u90CE", "Tokyo\u6771\u4EAC", "k\u00F6nig", "ng\u00F4", "o_o", "r2d2"})
  void ordinaryUsername_isAllowed(String name) {
    Ruling r = BUILT_IN.check(name, Surface.USERNAME);
    assertThat(r.allowed()).as("%s", r).isTrue();
  }
}
