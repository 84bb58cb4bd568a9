package dev.sluice.moderation;

import com.ibm.icu.lang.UCharacter;
import com.ibm.icu.lang.UCharacterCategory;
import com.ibm.icu.text.Normalizer2;
import com.ibm.icu.text.SpoofChecker;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The normal forms of a text, none of them a hand-written table.
 *
 * <p>{@link #fold}: NFKC case folding (UTS #31's NFKC_Casefold), which also maps fullwidth and
 * styled letters to plain ones ("ＡＤＭＩＮ", "𝐚𝐝𝐦𝐢𝐧" to "admin") and drops default-ignorables
 * (zero-width joiners, soft hyphens); whitespace runs become one space, trimmed.
 *
 * <p>{@link #normalized}: the UTS #39 skeleton of the fold, folded again, repeated until it stops
 * changing (a skeleton may hold capitals: "0" becomes "O", which folds to "o"). Two texts with the
 * same form are confusable. Applying it to its own output changes nothing.
 *
 * <p>{@link #key}: the matching alphabet, one code point at a time: the skeleton's prototype with
 * combining marks dropped ("fück", "fսck" and "ｆｕｃｋ" all key to "fuck"; "m" keys to "rn" on
 * both sides, terms and texts alike). ASCII digits and the leetspeak symbols stay as they are so
 * that {@link Leet} can read them both ways: the skeleton would turn "1" into "l" and lose "i".
 */
final class Canon {

  private static final Normalizer2 NFKC_CF = Normalizer2.getNFKCCasefoldInstance();
  private static final Normalizer2 NFD = Normalizer2.getNFDInstance();
  private static final SpoofChecker SKELETON =
      new SpoofChecker.Builder().setChecks(SpoofChecker.CONFUSABLE).build();

  /** Rounds of skeleton and fold before we give up on a fixed point; two suffice for Unicode 17. */
  private static final int MAX_ROUNDS = 6;

  /** Keys of BMP code points, filled as they are met; a racy write stores an equal string. */
  private static final String[] BMP_KEYS = new String[0x10000];
  /** Supplementary code points' keys, capped: past the cap they are computed each time. */
  private static final ConcurrentHashMap<Integer, String> ASTRAL_KEYS = new ConcurrentHashMap<>();
  private static final int ASTRAL_CAP = 4096;

  /**
   * Each ASCII character's normalized form, or null where it leaves ASCII or holds whitespace.
   * On ASCII the skeleton and the fold work one character at a time, so a text's form is the
   * concatenation of its characters' forms: one table read per character instead of two ICU
   * passes (about 2.5 us for a 14-character name).
   */
  private static final String[] ASCII_FORMS = new String[128];

  static {
    for (char c = 0; c < 128; c++) {
      String f = slowNormalized(NFKC_CF.normalize(String.valueOf(c)));
      boolean plain = c == ' ' ? f.equals(" ")
          : f.chars().allMatch(x -> x < 128 && !Character.isWhitespace(x));
      ASCII_FORMS[c] = plain ? f : null;
    }
  }

  private Canon() {}

  static String fold(CharSequence text) {
    return collapseWhitespace(NFKC_CF.normalize(text));
  }

  static String normalized(String folded) {
    StringBuilder b = new StringBuilder(folded.length() + 4);
    for (int i = 0; i < folded.length(); i++) {
      char c = folded.charAt(i);
      String f = c < 128 ? ASCII_FORMS[c] : null;
      if (f == null) {
        return slowNormalized(folded);
      }
      b.append(f);
    }
    return b.toString();
  }

  private static String slowNormalized(String folded) {
    String s = folded;
    for (int i = 0; i < MAX_ROUNDS; i++) {
      String t = fold(SKELETON.getSkeleton(s));
      if (t.equals(s)) {
        return s;
      }
      s = t;
    }
    return s;
  }

  /** The matching key of a folded text: see the class comment. */
  static String key(String folded) {
    StringBuilder b = new StringBuilder(folded.length() + 4);
    for (int i = 0; i < folded.length(); ) {
      int cp = folded.codePointAt(i);
      i += Character.charCount(cp);
      if (cp < 0x80 && ((cp >= 'a' && cp <= 'z' && cp != 'm') || Leet.isLeet(cp) || cp == ' ')) {
        b.append((char) cp);
      } else if (UCharacter.isUWhiteSpace(cp)) {
        b.append(' ');
      } else {
        b.append(keyOf(cp));
      }
    }
    return collapseWhitespace(b.toString()); // a dropped mark can leave two spaces together
  }

  static String keyOf(int cp) {
    if (cp < 0x10000) {
      String k = BMP_KEYS[cp];
      if (k == null) {
        k = computeKey(cp);
        BMP_KEYS[cp] = k;
      }
      return k;
    }
    String k = ASTRAL_KEYS.get(cp);
    if (k == null) {
      k = computeKey(cp);
      if (ASTRAL_KEYS.size() < ASTRAL_CAP) {
        ASTRAL_KEYS.putIfAbsent(cp, k);
      }
    }
    return k;
  }

  private static String computeKey(int cp) {
    String s = new String(Character.toChars(cp));
    for (int i = 0; i < MAX_ROUNDS; i++) {
      String t = dropMarks(NFD.normalize(fold(SKELETON.getSkeleton(NFKC_CF.normalize(s)))));
      if (t.equals(s)) {
        break;
      }
      s = t;
    }
    return s;
  }

  private static String dropMarks(String s) {
    StringBuilder b = null;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      int n = Character.charCount(cp);
      int t = UCharacter.getType(cp);
      boolean mark = t == UCharacterCategory.NON_SPACING_MARK
          || t == UCharacterCategory.ENCLOSING_MARK;
      if (mark && b == null) {
        b = new StringBuilder(s.length()).append(s, 0, i);
      } else if (!mark && b != null) {
        b.append(s, i, i + n);
      }
      i += n;
    }
    return b == null ? s : b.toString();
  }

  /** Whitespace runs as one space, none at either end; the input itself when already so. */
  static String collapseWhitespace(String s) {
    int n = s.length();
    boolean clean = n == 0 || (s.charAt(0) != ' ' && s.charAt(n - 1) != ' ');
    for (int i = 0; i < n && clean; i++) {
      char c = s.charAt(i);
      clean = c > ' ' && !(c >= 0x85 && UCharacter.isUWhiteSpace(c))
          || (c == ' ' && s.charAt(i + 1) != ' ');
    }
    if (clean) {
      return s;
    }
    StringBuilder b = new StringBuilder(n);
    boolean space = false;
    for (int i = 0; i < n; ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (UCharacter.isUWhiteSpace(cp)) {
        space = b.length() > 0;
      } else {
        if (space) {
          b.append(' ');
          space = false;
        }
        b.appendCodePoint(cp);
      }
    }
    return b.toString();
  }
}
