package dev.sluice.moderation;

import com.ibm.icu.text.SpoofChecker;
import com.ibm.icu.text.SpoofChecker.RestrictionLevel;
import dev.sluice.core.InvalidValueException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The pipeline, cheapest and most certain refusals first: size, characters, emptiness, length,
 * identifier characters, the lists, then scripts. A blocked term is reported before mixed scripts
 * because it says more ("fսck" with an Armenian letter is a blocked term, not only a spoof).
 */
final class DefaultModerator implements Moderator {

  private static final Map<SurfaceRules.Scripts, SpoofChecker> SCRIPT_CHECKERS =
      new EnumMap<>(SurfaceRules.Scripts.class);

  static {
    SCRIPT_CHECKERS.put(SurfaceRules.Scripts.SINGLE,
        checker(RestrictionLevel.SINGLE_SCRIPT_RESTRICTIVE));
    SCRIPT_CHECKERS.put(SurfaceRules.Scripts.HIGHLY_RESTRICTIVE,
        checker(RestrictionLevel.HIGHLY_RESTRICTIVE));
    SCRIPT_CHECKERS.put(SurfaceRules.Scripts.MODERATELY_RESTRICTIVE,
        checker(RestrictionLevel.MODERATELY_RESTRICTIVE));
  }

  private final TermIndex terms;
  private final Map<Surface, SurfaceRules> rules;
  /** Each surface's separators, and their keys, as {@link Canon#key} writes them. */
  private final Map<Surface, String> keyedSeparators = new EnumMap<>(Surface.class);
  private final Palette palette;
  private final NameGenerator names;

  DefaultModerator(TermIndex terms, Map<Surface, SurfaceRules> rules, Palette palette,
      NameGenerator names) {
    this.terms = terms;
    this.rules = new EnumMap<>(rules);
    this.palette = palette;
    this.names = names;
    rules.forEach((surface, r) -> {
      StringBuilder b = new StringBuilder(r.separators());
      r.separators().codePoints().mapToObj(Canon::keyOf).forEach(b::append);
      keyedSeparators.put(surface, b.toString());
    });
  }

  @Override
  public Ruling check(CharSequence text, Surface surface) {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(surface, "surface");
    if (surface == Surface.REACTION) {
      return palette.check(text);
    }
    SurfaceRules r = rules.get(surface);
    if (text.length() > r.rawLimit()) {
      return Ruling.refused(surface, Reason.TOO_LONG, "");
    }
    String folded = Canon.fold(text);
    String normalized = Canon.normalized(folded);
    Reason refused = Characters.scan(text, true);
    if (refused != Reason.NONE) {
      return Ruling.refused(surface, refused, normalized);
    }
    String shown = Canon.collapseWhitespace(text.toString());
    if (shown.isEmpty()) {
      return r.allowEmpty() ? Ruling.allowed(surface, "")
          : Ruling.refused(surface, Reason.TOO_SHORT, "");
    }
    if (!Characters.hasVisible(folded)) {
      return Ruling.refused(surface, Reason.INVISIBLE_CHARACTERS, normalized);
    }
    int length = Characters.graphemes(shown);
    if (length < r.minLength() || length > r.maxLength()) {
      return Ruling.refused(surface, length < r.minLength() ? Reason.TOO_SHORT : Reason.TOO_LONG,
          normalized);
    }
    boolean trimmed = shown.length() != text.length();
    if (r.identifier() && (trimmed || !Characters.isIdentifier(folded, r))) {
      return Ruling.refused(surface, Reason.INVALID_CHARACTERS, normalized);
    }
    String separators = keyedSeparators.get(surface);
    Term term = terms.find(Canon.key(folded), cp -> separators.indexOf(cp) >= 0);
    if (term != null) {
      return Ruling.matched(surface, term.reason, term.written, normalized);
    }
    SpoofChecker scripts = SCRIPT_CHECKERS.get(r.scripts());
    if (scripts != null && scripts.failsChecks(folded)) {
      return Ruling.refused(surface, Reason.MIXED_SCRIPTS, normalized);
    }
    return Ruling.allowed(surface, normalized);
  }

  @Override
  public String displayName(CharSequence proposed, RandomGenerator random) {
    Objects.requireNonNull(random, "random");
    if (proposed != null && check(proposed, Surface.DISPLAY_NAME).allowed()) {
      return proposed.toString();
    }
    for (int i = 0; i < NameGenerator.ATTEMPTS; i++) {
      String name = names.next(random);
      if (check(name, Surface.DISPLAY_NAME).allowed()) {
        return name;
      }
    }
    return NameGenerator.LAST_RESORT + NameGenerator.digits(random);
  }

  /**
   * Fails the build when a fallback word, or the last resort, is refused for what it says or
   * holds. Length is not checked: display names configured shorter than "Player0000" get it
   * anyway, as a name must be given.
   */
  void checkFallback(List<String> adjectives, List<String> nouns) {
    for (String w : adjectives) {
      checkWord("fallbackAdjectives", w);
    }
    for (String w : nouns) {
      checkWord("fallbackNouns", w);
    }
    checkWord("fallback", NameGenerator.LAST_RESORT + "0000");
  }

  private void checkWord(String field, String word) {
    Ruling r = check(word, Surface.DISPLAY_NAME);
    if (!r.allowed() && r.reason() != Reason.TOO_LONG && r.reason() != Reason.TOO_SHORT) {
      throw new InvalidValueException(field, Lists.quote(word),
          "a word that passes as a display name; refused: " + r.reason().label());
    }
  }

  private static SpoofChecker checker(RestrictionLevel level) {
    return new SpoofChecker.Builder()
        .setChecks(SpoofChecker.RESTRICTION_LEVEL | SpoofChecker.MIXED_NUMBERS)
        .setRestrictionLevel(level)
        .build();
  }
}
