package dev.sluice.moderation;

import java.util.Locale;

/**
 * Where a text will be shown. Each name surface has its own {@link SurfaceRules} (length,
 * separators, scripts); reactions are checked against the palette instead.
 */
public enum Surface {
  /** An account name: letters, digits, '-' and '_' by default, 3 to 20 characters. */
  USERNAME,
  /** The name shown in a lobby: 1 to 32 characters, words split on spaces, '-', '_' and '.'. */
  DISPLAY_NAME,
  /** A room's name: 3 to 50 characters or empty, words split on spaces, '-', '_', '.' and '!'. */
  ROOM_NAME,
  /** One reaction: an entry of the palette, a whole emoji sequence counting as one. */
  REACTION;

  private final String label = name().toLowerCase(Locale.ROOT);

  /** The name used in metrics, logs, policy files and the command line, like {@code room_name}. */
  public String label() {
    return label;
  }
}
