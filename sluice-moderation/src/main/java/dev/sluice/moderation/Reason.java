package dev.sluice.moderation;

import java.util.Locale;

/** Why a text was refused, or {@link #NONE} when it was allowed. */
public enum Reason {
  /** Allowed. */
  NONE,
  /** A term of the block list, however it was disguised (confusables, leetspeak, repeats, splits). */
  BLOCKED_TERM,
  /** A reserved name (admin, moderator, system): people could take it for staff or the game. */
  RESERVED,
  /** C0 or C1 controls, line separators, or bidirectional controls that reorder what is shown. */
  CONTROL_CHARACTERS,
  /**
   * Characters that show as nothing (zero-width space, word joiner, Hangul filler, braille blank),
   * or a text made only of default-ignorable characters.
   */
  INVISIBLE_CHARACTERS,
  /**
   * Unassigned, private-use or malformed code points, stacks of more than four combining marks,
   * or, on an identifier surface, anything but letters, marks, digits and its separators.
   */
  INVALID_CHARACTERS,
  /** Scripts mixed beyond the surface's UTS #39 restriction level, or digits of two systems. */
  MIXED_SCRIPTS,
  /** Fewer user-perceived characters than the surface allows (or empty where it must not be). */
  TOO_SHORT,
  /** More user-perceived characters than the surface allows. */
  TOO_LONG,
  /** A reaction that is not one of the palette's entries. */
  NOT_IN_PALETTE;

  private final String label = name().toLowerCase(Locale.ROOT);

  /** The name used in metrics, logs and JSON bodies, like {@code blocked_term}. */
  public String label() {
    return label;
  }
}
