package dev.sluice.moderation;

/** One entry of the block or reserved list, keyed for matching. */
final class Term {

  /** The entry as written in its list, reported in {@link Ruling#matchedTerm()}. */
  final String written;
  /** BLOCKED_TERM or RESERVED. */
  final Reason reason;
  /** Matched anywhere inside a word ("*term*" in a list), not only as a whole word. */
  final boolean anywhere;
  /** Longer than the short-term length: may also match a word inside a segment. */
  final boolean isLong;
  /** Only letters (no digits): only then can it be a word bounded by non-letters. */
  final boolean letters;
  final Runs runs;

  Term(String written, Reason reason, boolean anywhere, String key, int shortLength) {
    this.written = written;
    this.reason = reason;
    this.anywhere = anywhere;
    this.isLong = key.codePointCount(0, key.length()) > shortLength;
    this.letters = key.codePoints().allMatch(Characters::isWordChar);
    this.runs = Runs.of(key);
  }

  /** The more severe of two matches, the first on a tie; either may be null. */
  static Term worse(Term a, Term b) {
    if (a == null) {
      return b;
    }
    if (b == null || a.reason == Reason.BLOCKED_TERM) {
      return a;
    }
    return b.reason == Reason.BLOCKED_TERM ? b : a;
  }
}
