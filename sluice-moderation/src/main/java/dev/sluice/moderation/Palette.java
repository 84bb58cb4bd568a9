package dev.sluice.moderation;

import com.ibm.icu.lang.UCharacter;
import com.ibm.icu.lang.UProperty;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The reactions players may send: an allowlist, because a reaction is broadcast to a room and a
 * modified client can put anything in it (seed 001's "Reaction text" threat: any 1-32 character
 * string, slurs included). Everything not in the palette is refused.
 *
 * <p>An entry is a whole emoji sequence: a ZWJ family, a flag (two regional indicators, or a black
 * flag with tags), a keycap. Emoji presentation selectors (U+FE0F, U+FE0E) are ignored on both
 * sides, so "❤" and "❤️" are one entry; a skin tone (U+1F3FB..U+1F3FF) is accepted right after a
 * character that takes one, so "👍🏽" passes where "👍" is listed, and "👍🏽🏽" or "🏽" alone do not.
 */
final class Palette {

  /** Longest reaction, in UTF-16 units: a family of four with skin tones needs about 35. */
  static final int MAX_UNITS = 64;

  private final Map<String, String> entries = new HashMap<>();

  Palette(List<String> entries) {
    for (String e : entries) {
      this.entries.put(withoutPresentation(e), e);
    }
  }

  Ruling check(CharSequence text) {
    if (text.length() == 0) {
      return Ruling.refused(Surface.REACTION, Reason.TOO_SHORT, "");
    }
    if (text.length() > MAX_UNITS) {
      return Ruling.refused(Surface.REACTION, Reason.TOO_LONG, "");
    }
    String key = withoutPresentation(text);
    Reason r = Characters.scan(text, false);
    if (r != Reason.NONE) {
      return Ruling.refused(Surface.REACTION, r, key);
    }
    if (entries.containsKey(key)) {
      return Ruling.allowed(Surface.REACTION, key);
    }
    String base = withoutSkinTones(key);
    if (base != null && entries.containsKey(base)) {
      return Ruling.allowed(Surface.REACTION, key);
    }
    return Ruling.refused(Surface.REACTION, Reason.NOT_IN_PALETTE, key);
  }

  static String withoutPresentation(CharSequence s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != '\uFE0F' && c != '\uFE0E') {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** The text without its skin tones, or null when one does not follow a modifier base. */
  private static String withoutSkinTones(String s) {
    StringBuilder b = new StringBuilder(s.length());
    int previous = -1;
    boolean any = false;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (cp >= 0x1F3FB && cp <= 0x1F3FF) {
        if (previous < 0 || !UCharacter.hasBinaryProperty(previous, UProperty.EMOJI_MODIFIER_BASE)) {
          return null;
        }
        any = true;
      } else {
        b.appendCodePoint(cp);
      }
      previous = cp;
    }
    return any ? b.toString() : null;
  }
}
