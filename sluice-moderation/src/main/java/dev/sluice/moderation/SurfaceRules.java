package dev.sluice.moderation;

import com.ibm.icu.lang.UCharacter;
import dev.sluice.core.InvalidValueException;
import java.util.Objects;

/**
 * How one name surface is checked: its length in user-perceived characters (grapheme clusters, so
 * "e" plus a combining accent or a family emoji counts as one), the characters that split it into
 * words (whitespace always does), whether it may be empty, whether it is an identifier (letters,
 * marks, digits and separators only) and how far scripts may mix. Immutable; the builder checks
 * each value when it is set.
 *
 * <p>Defaults, from seed 001: usernames 3..20, split on '-' and '_', identifiers, one script
 * (or Latin with Han and kana or Hangul); display names 1..32, split on spaces, '-', '_' and '.';
 * room names 3..50 or empty, split on spaces, '-', '_', '.' and '!'. Display and room names may mix
 * Latin with one other script except Cyrillic and Greek, whose letters pass for Latin ones.
 */
public final class SurfaceRules {

  /** Longest name a surface may allow, in grapheme clusters. */
  static final int MAX_LENGTH = 256;

  /** How far scripts may mix, as the UTS #39 restriction levels. */
  public enum Scripts {
    /** One script only (Japanese kana with Han and Korean Hangul with Han count as one). */
    SINGLE,
    /** One script, or Latin with Han and kana, Han and Bopomofo, or Han and Hangul. */
    HIGHLY_RESTRICTIVE,
    /** As highly restrictive, or Latin with any one other script except Cyrillic and Greek. */
    MODERATELY_RESTRICTIVE,
    /** Any mix: no script check at all. */
    ANY
  }

  private final Surface surface;
  private final int minLength;
  private final int maxLength;
  private final String separators;
  private final boolean allowEmpty;
  private final boolean identifier;
  private final Scripts scripts;

  private SurfaceRules(Builder b) {
    this.surface = b.surface;
    this.minLength = b.minLength;
    this.maxLength = b.maxLength;
    this.separators = b.separators;
    this.allowEmpty = b.allowEmpty;
    this.identifier = b.identifier;
    this.scripts = b.scripts;
  }

  /** The default rules of a name surface. */
  public static SurfaceRules of(Surface surface) {
    return builder(surface).build();
  }

  /** A builder starting from the surface's defaults. */
  public static Builder builder(Surface surface) {
    return new Builder(surface);
  }

  /** A builder starting from these rules. */
  public Builder toBuilder() {
    Builder b = new Builder(surface);
    b.minLength = minLength;
    b.maxLength = maxLength;
    b.separators = separators;
    b.allowEmpty = allowEmpty;
    b.identifier = identifier;
    b.scripts = scripts;
    return b;
  }

  public Surface surface() {
    return surface;
  }

  public int minLength() {
    return minLength;
  }

  public int maxLength() {
    return maxLength;
  }

  /** Characters that split words, besides whitespace. */
  public String separators() {
    return separators;
  }

  public boolean allowEmpty() {
    return allowEmpty;
  }

  public boolean identifier() {
    return identifier;
  }

  public Scripts scripts() {
    return scripts;
  }

  /** Inputs longer than this many UTF-16 units are refused before any work is spent on them. */
  int rawLimit() {
    // A cluster of a base, four marks and a variation selector, or an 11-unit family emoji.
    return 16 * maxLength + 16;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof SurfaceRules)) {
      return false;
    }
    SurfaceRules r = (SurfaceRules) o;
    return surface == r.surface && minLength == r.minLength && maxLength == r.maxLength
        && separators.equals(r.separators) && allowEmpty == r.allowEmpty
        && identifier == r.identifier && scripts == r.scripts;
  }

  @Override
  public int hashCode() {
    return Objects.hash(surface, minLength, maxLength, separators, allowEmpty, identifier, scripts);
  }

  @Override
  public String toString() {
    return surface.label() + "{length=" + minLength + ".." + maxLength + ", separators=\""
        + separators + "\", allowEmpty=" + allowEmpty + ", identifier=" + identifier
        + ", scripts=" + scripts + "}";
  }

  /** Sets one value at a time, each checked at once; {@link #build()} checks them together. */
  public static final class Builder {

    private final Surface surface;
    private int minLength;
    private int maxLength;
    private String separators;
    private boolean allowEmpty;
    private boolean identifier;
    private Scripts scripts = Scripts.MODERATELY_RESTRICTIVE;

    private Builder(Surface surface) {
      if (surface == null || surface == Surface.REACTION) {
        throw new InvalidValueException("surface", String.valueOf(surface),
            "USERNAME, DISPLAY_NAME or ROOM_NAME; reactions are checked against the palette");
      }
      this.surface = surface;
      switch (surface) {
        case USERNAME:
          minLength = 3;
          maxLength = 20;
          separators = "-_";
          identifier = true;
          scripts = Scripts.HIGHLY_RESTRICTIVE;
          break;
        case DISPLAY_NAME:
          minLength = 1;
          maxLength = 32;
          separators = "-_.";
          break;
        default:
          minLength = 3;
          maxLength = 50;
          separators = "-_.!";
          allowEmpty = true;
      }
    }

    /** Fewest grapheme clusters, 1 or more (use {@link #allowEmpty} for an optional name). */
    public Builder minLength(int minLength) {
      if (minLength < 1 || minLength > MAX_LENGTH) {
        throw new InvalidValueException("minLength", String.valueOf(minLength),
            "1.." + MAX_LENGTH);
      }
      this.minLength = minLength;
      return this;
    }

    /** Most grapheme clusters, at most 256. */
    public Builder maxLength(int maxLength) {
      if (maxLength < 1 || maxLength > MAX_LENGTH) {
        throw new InvalidValueException("maxLength", String.valueOf(maxLength),
            "1.." + MAX_LENGTH);
      }
      this.maxLength = maxLength;
      return this;
    }

    /** Characters that split words besides whitespace: punctuation or symbols, ASCII or not. */
    public Builder separators(String separators) {
      if (separators == null || separators.length() > 32 || !separators.codePoints().allMatch(
          cp -> !UCharacter.isLetterOrDigit(cp) && Characters.isPunctuationOrSymbol(cp))) {
        throw new InvalidValueException("separators", Lists.quote(separators),
            "up to 32 punctuation or symbol characters");
      }
      this.separators = separators;
      return this;
    }

    /** Whether an empty (or all-whitespace) text is allowed whatever the minimum length. */
    public Builder allowEmpty(boolean allowEmpty) {
      this.allowEmpty = allowEmpty;
      return this;
    }

    /** Whether only letters, marks, digits and the separators are allowed (no spaces, no emoji). */
    public Builder identifier(boolean identifier) {
      this.identifier = identifier;
      return this;
    }

    /** How far scripts may mix. */
    public Builder scripts(Scripts scripts) {
      if (scripts == null) {
        throw new InvalidValueException("scripts", "null",
            "SINGLE, HIGHLY_RESTRICTIVE, MODERATELY_RESTRICTIVE or ANY");
      }
      this.scripts = scripts;
      return this;
    }

    public SurfaceRules build() {
      if (maxLength < minLength) {
        throw new InvalidValueException("maxLength", String.valueOf(maxLength),
            ">= minLength " + minLength);
      }
      return new SurfaceRules(this);
    }
  }
}
