package dev.sluice.moderation;

import com.ibm.icu.lang.UCharacter;
import com.ibm.icu.lang.UCharacterCategory;
import com.ibm.icu.lang.UProperty;
import com.ibm.icu.text.BreakIterator;

/**
 * What single code points are, with ICU's Unicode data (newer than the JDK's), and the first
 * pass over a raw text: the characters no name may hold, whatever their neighbours.
 */
final class Characters {

  /**
   * Combining marks allowed on one base. Vietnamese needs two ("ệ" decomposed), Thai and
   * pointed Hebrew three; "Zalgo" text stacks dozens to spill over neighbouring lines.
   */
  static final int MAX_MARKS = 4;

  private static final int ZWNJ = 0x200C;
  private static final int ZWJ = 0x200D;
  private static final int BLACK_FLAG = 0x1F3F4;
  private static final int BRAILLE_BLANK = 0x2800;

  private static final ThreadLocal<BreakIterator> GRAPHEMES =
      ThreadLocal.withInitial(BreakIterator::getCharacterInstance);

  private Characters() {}

  /**
   * The reason to refuse the first character that may not appear in a text, or NONE. Names
   * ({@code name} true) also refuse invisible characters: default-ignorables other than the
   * joiners and variation selectors that scripts and emoji need, and the braille blank. Tag
   * characters are kept only inside a subdivision flag (black flag, tags, cancel tag).
   */
  static Reason scan(CharSequence s, boolean name) {
    int marks = 0;
    boolean inFlag = false;
    for (int i = 0; i < s.length(); ) {
      char c = s.charAt(i);
      int cp;
      if (Character.isHighSurrogate(c) && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        cp = Character.toCodePoint(c, s.charAt(i + 1));
        i += 2;
      } else if (Character.isSurrogate(c)) {
        return Reason.INVALID_CHARACTERS;
      } else {
        cp = c;
        i++;
      }
      if (cp >= 0x20 && cp < 0x7F) {
        marks = 0;
        inFlag = false;
        continue;
      }
      int type = UCharacter.getType(cp);
      switch (type) {
        case UCharacterCategory.CONTROL:
        case UCharacterCategory.LINE_SEPARATOR:
        case UCharacterCategory.PARAGRAPH_SEPARATOR:
          return Reason.CONTROL_CHARACTERS;
        case UCharacterCategory.UNASSIGNED:
        case UCharacterCategory.PRIVATE_USE:
        case UCharacterCategory.SURROGATE:
          return Reason.INVALID_CHARACTERS;
        default:
          break;
      }
      if (UCharacter.hasBinaryProperty(cp, UProperty.BIDI_CONTROL)) {
        return Reason.CONTROL_CHARACTERS;
      }
      boolean tag = cp >= 0xE0020 && cp <= 0xE007F;
      if (name && !(tag && inFlag)) {
        if (isInvisible(cp)) {
          return Reason.INVISIBLE_CHARACTERS;
        }
        if (type == UCharacterCategory.FORMAT && cp != ZWNJ && cp != ZWJ) {
          return Reason.INVALID_CHARACTERS;
        }
      }
      inFlag = cp == BLACK_FLAG || (tag && inFlag && cp != 0xE007F);
      if (type == UCharacterCategory.NON_SPACING_MARK || type == UCharacterCategory.ENCLOSING_MARK) {
        if (++marks > MAX_MARKS) {
          return Reason.INVALID_CHARACTERS;
        }
      } else {
        marks = 0;
      }
    }
    return Reason.NONE;
  }

  /** Shows as nothing: the braille blank, or a default-ignorable that no script or emoji needs. */
  static boolean isInvisible(int cp) {
    if (cp == BRAILLE_BLANK) {
      return true;
    }
    if (cp == ZWNJ || cp == ZWJ || isVariationSelector(cp)) {
      return false;
    }
    return UCharacter.hasBinaryProperty(cp, UProperty.DEFAULT_IGNORABLE_CODE_POINT);
  }

  static boolean isVariationSelector(int cp) {
    return (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0100 && cp <= 0xE01EF)
        || (cp >= 0x180B && cp <= 0x180D) || cp == 0x180F;
  }

  /** Escaped in messages: controls, format characters, odd spaces, unassigned, invisible. */
  static boolean isHidden(int cp) {
    int t = UCharacter.getType(cp);
    return (t >= UCharacterCategory.SPACE_SEPARATOR && t <= UCharacterCategory.SURROGATE)
        || t == UCharacterCategory.UNASSIGNED || isInvisible(cp);
  }

  /** A letter, digit, punctuation or symbol: something that shows. */
  static boolean isVisible(int cp) {
    int t = UCharacter.getType(cp);
    return isLetterType(t) || (t >= UCharacterCategory.DECIMAL_DIGIT_NUMBER
        && t <= UCharacterCategory.OTHER_NUMBER) || isPunctuationOrSymbolType(t);
  }

  /** True when some character of the text shows. */
  static boolean hasVisible(String s) {
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      if (isVisible(cp) && cp != BRAILLE_BLANK) {
        return true;
      }
      i += Character.charCount(cp);
    }
    return false;
  }

  /** Part of a word: a letter or a combining mark (not a digit: digits end a word). */
  static boolean isWordChar(int cp) {
    if (cp < 0x80) {
      return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    }
    int t = UCharacter.getType(cp);
    return isLetterType(t) || t == UCharacterCategory.NON_SPACING_MARK
        || t == UCharacterCategory.COMBINING_SPACING_MARK
        || t == UCharacterCategory.ENCLOSING_MARK;
  }

  static boolean isPunctuationOrSymbol(int cp) {
    return isPunctuationOrSymbolType(UCharacter.getType(cp));
  }

  /** Letters, marks, decimal digits and the surface's separators only. */
  static boolean isIdentifier(String folded, SurfaceRules rules) {
    for (int i = 0; i < folded.length(); ) {
      int cp = folded.codePointAt(i);
      i += Character.charCount(cp);
      if (isWordChar(cp) || UCharacter.isDigit(cp) || cp == ZWNJ || cp == ZWJ
          || (rules.separators().indexOf(cp) >= 0)) {
        continue;
      }
      return false;
    }
    return true;
  }

  /** User-perceived characters (extended grapheme clusters). */
  static int graphemes(String s) {
    boolean ascii = true;
    for (int i = 0; i < s.length() && ascii; i++) {
      ascii = s.charAt(i) < 0x80;
    }
    if (ascii) {
      return s.length(); // scan() refused CR and LF, the only ASCII pair that clusters
    }
    BreakIterator it = GRAPHEMES.get();
    it.setText(s);
    int n = 0;
    while (it.next() != BreakIterator.DONE) {
      n++;
    }
    it.setText("");
    return n;
  }

  private static boolean isLetterType(int t) {
    return t >= UCharacterCategory.UPPERCASE_LETTER && t <= UCharacterCategory.OTHER_LETTER;
  }

  private static boolean isPunctuationOrSymbolType(int t) {
    switch (t) {
      case UCharacterCategory.CONNECTOR_PUNCTUATION:
      case UCharacterCategory.DASH_PUNCTUATION:
      case UCharacterCategory.START_PUNCTUATION:
      case UCharacterCategory.END_PUNCTUATION:
      case UCharacterCategory.INITIAL_PUNCTUATION:
      case UCharacterCategory.FINAL_PUNCTUATION:
      case UCharacterCategory.OTHER_PUNCTUATION:
      case UCharacterCategory.MATH_SYMBOL:
      case UCharacterCategory.CURRENCY_SYMBOL:
      case UCharacterCategory.MODIFIER_SYMBOL:
      case UCharacterCategory.OTHER_SYMBOL:
        return true;
      default:
        return false;
    }
  }
}
