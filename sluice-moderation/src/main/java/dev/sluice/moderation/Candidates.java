package dev.sluice.moderation;

import com.ibm.icu.lang.UCharacter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;

/**
 * The strings of a keyed name that are matched against the lists. Seed 001 matched segments and
 * the whole name with every non-alphanumeric dropped; we add the spaced-out words it missed.
 *
 * <ul>
 *   <li>words: the whitespace-separated tokens ("sh!t" in a room name, where '!' also splits) and
 *       the segments between separators. Terms match as whole words here, and "*term*" entries
 *       anywhere inside.
 *   <li>joined: runs of consecutive short segments of one or two characters ("f u c k", "fu-ck",
 *       "n.a.z.i"; {@link TermIndex} joins them from {@link #segments}), and the whole name with separators and other punctuation dropped ("f,u,c,k").
 *       Only whole-word matches count here: "The pen is mightier" and "Scunthorpe United" stay
 *       clean ("pen" is three long, and neither joined name is a term), while a name that is
 *       nothing but a split term ("Pen Is") is caught, as seed 001's whole-name check did.
 * </ul>
 */
final class Candidates {

  /** A segment this short may be half of a split word. */
  static final int SHORT_SEGMENT = 2;

  final List<String> words = new ArrayList<>(4);
  /** The segments in order, for {@link TermIndex} to join the short ones. */
  final List<String> segments = new ArrayList<>(4);
  /** The whole name without separators and punctuation, or null when it is one of the words. */
  final String whole;
  private final Set<String> seen = new HashSet<>();

  /**
   * @param key the keyed name (whitespace already single spaces)
   * @param separator true for the code points that split segments, besides the space
   */
  Candidates(String key, IntPredicate separator) {
    StringBuilder whole = new StringBuilder(key.length());
    int token = 0;
    int segment = 0;
    for (int i = 0; i <= key.length(); ) {
      int cp = i < key.length() ? key.codePointAt(i) : ' ';
      boolean space = cp == ' ';
      if (space || separator.test(cp)) {
        if (i > segment) {
          segments.add(key.substring(segment, i));
        }
        segment = i + Character.charCount(cp);
      }
      if (space) {
        if (i > token) {
          add(words, key.substring(token, i));
        }
        token = i + 1;
      }
      if (i < key.length() && (Characters.isWordChar(cp) || UCharacter.isDigit(cp)
          || Leet.isLeet(cp))) {
        whole.appendCodePoint(cp);
      }
      i += Character.charCount(cp);
    }
    for (String s : segments) {
      add(words, s);
    }
    String w = whole.toString();
    this.whole = w.isEmpty() || seen.contains(w) ? null : w;
  }

  static boolean isShort(String segment) {
    return segment.codePointCount(0, segment.length()) <= SHORT_SEGMENT;
  }

  private void add(List<String> to, String s) {
    if (seen.add(s)) {
      to.add(s);
    }
  }
}
