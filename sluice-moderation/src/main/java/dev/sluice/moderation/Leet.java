package dev.sluice.moderation;

import java.util.ArrayList;
import java.util.List;

/**
 * Leetspeak readings of a candidate word. "4" and "@" read as a, "8" as b, "3" as e, "6" and "9"
 * as g, "0" as o, "5" and "$" as s, "7" and "+" as t, "2" as z; "1", "!" and "|" read as i or as
 * l, and both readings are tried.
 *
 * <p>Three families of readings, each tried for a match: the word as written (so a term with
 * digits, "1488", still matches); every symbol read as a letter ("5h1t", "@$$"); and only the
 * symbols between the first and last letter read, what lies outside dropped, so that trailing
 * digits do not hide a word ("h1tl3r88" reads "hitler", where the full reading is "hitlerbb").
 *
 * <p>Bounded: with k ambiguous symbols a family has 2^k readings; past {@value #MAX_AMBIGUOUS}
 * only the all-i and all-l readings are tried, so a candidate has at most 1 + 2 * 16 readings.
 * Worked numbers: "k1ll" gives "k1ll", "kill", "klll"; "1!1!1!" gives "1!1!1!", "iiiiii",
 * "llllll".
 */
final class Leet {

  static final int MAX_AMBIGUOUS = 4;

  /** Marks the symbols read both as i and as l in {@link #READING}. */
  private static final char EITHER = 1;

  /** Lower-case reading of each ASCII symbol, 0 for none. */
  private static final char[] READING = new char[128];

  static {
    String[] pairs = {"4a", "@a", "8b", "3e", "6g", "9g", "0o", "5s", "$s", "7t", "+t", "2z"};
    for (String p : pairs) {
      READING[p.charAt(0)] = p.charAt(1);
    }
    READING['1'] = EITHER;
    READING['!'] = EITHER;
    READING['|'] = EITHER;
  }

  private Leet() {}

  static boolean isLeet(int cp) {
    return cp < 128 && READING[cp] != 0;
  }

  /** Every reading of {@code word}, the word itself first, without duplicates. */
  static List<String> readings(String word) {
    List<String> out = new ArrayList<>(4);
    out.add(word);
    int first = -1;
    int last = -1;
    boolean leet = false;
    for (int i = 0; i < word.length(); ) {
      int cp = word.codePointAt(i);
      if (Characters.isWordChar(cp)) {
        if (first < 0) {
          first = i;
        }
        last = i + Character.charCount(cp);
      }
      leet |= isLeet(cp);
      i += Character.charCount(cp);
    }
    if (!leet) {
      return out;
    }
    expand(word, out);
    if (first >= 0 && (first > 0 || last < word.length())) {
      String inner = word.substring(first, last);
      if (!out.contains(inner)) {
        out.add(inner);
      }
      expand(inner, out);
    }
    return out;
  }

  private static void expand(String word, List<String> out) {
    char[] chars = word.toCharArray();
    int[] either = new int[chars.length];
    int ambiguous = 0;
    for (int i = 0; i < chars.length; i++) {
      char c = chars[i];
      if (c < 128 && READING[c] != 0) {
        chars[i] = READING[c];
        if (chars[i] == EITHER) {
          either[ambiguous++] = i;
        }
      }
    }
    if (ambiguous > MAX_AMBIGUOUS) {
      add(out, fill(chars, either, ambiguous, 0));
      add(out, fill(chars, either, ambiguous, -1));
    } else {
      for (int mask = 0; mask < 1 << ambiguous; mask++) {
        add(out, fill(chars, either, ambiguous, mask));
      }
    }
  }

  /** The word with its k-th ambiguous symbol read as l when bit k of mask is set, else as i. */
  private static String fill(char[] chars, int[] either, int ambiguous, int mask) {
    for (int k = 0; k < ambiguous; k++) {
      chars[either[k]] = ((mask >>> Math.min(k, 31)) & 1) == 1 ? 'l' : 'i';
    }
    return new String(chars);
  }

  private static void add(List<String> out, String s) {
    if (!out.contains(s)) {
      out.add(s);
    }
  }
}
