package dev.sluice.moderation;

/**
 * A word as runs of one code point: "fuuuck" is f, u x3, c, k. Repeated letters are how a blocked
 * word is stretched past a plain list, so terms and texts are compared run by run: a text matches
 * a term when the letters agree and each of the text's runs is at least as long as the term's.
 * "fuuuck" and "shiiit" match "fuck" and "shit"; "as" does not match "ass" (one s where the term
 * has two), so collapsing repeats does not turn ordinary short words into blocked ones.
 */
final class Runs {

  final int[] cps;
  final int[] counts;
  final int size;

  private Runs(int[] cps, int[] counts, int size) {
    this.cps = cps;
    this.counts = counts;
    this.size = size;
  }

  static Runs of(String s) {
    int[] cps = new int[s.length()];
    int[] counts = new int[s.length()];
    int n = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (n > 0 && cps[n - 1] == cp) {
        counts[n - 1]++;
      } else {
        cps[n] = cp;
        counts[n++] = 1;
      }
    }
    return new Runs(cps, counts, n);
  }

  /** The run letters from {@code from} to {@code to}, each once: the key terms are indexed by. */
  String collapsed(int from, int to) {
    return new String(cps, from, to - from);
  }

  /** True when the term's runs sit at {@code at}, each of ours at least as long as its. */
  boolean covers(Runs term, int at) {
    if (at + term.size > size) {
      return false;
    }
    for (int i = 0; i < term.size; i++) {
      if (cps[at + i] != term.cps[i] || counts[at + i] < term.counts[i]) {
        return false;
      }
    }
    return true;
  }
}
