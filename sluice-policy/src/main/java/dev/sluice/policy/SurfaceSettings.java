package dev.sluice.policy;

import java.util.List;

/**
 * One name surface's rules as the policy writes them ({@code moderation.surfaces.room_name}),
 * defaults filled in. The defaults are the moderation library's own (a test of the server, which
 * has both, keeps them equal); lengths are checked here, the separators by whoever builds the
 * rules (which characters count as punctuation is the library's call).
 *
 * @param minLength fewest user-perceived characters, 1..256
 * @param maxLength most, 1..256 and at least {@code minLength}
 * @param separators characters that split words besides whitespace
 * @param allowEmpty whether an empty text passes whatever the minimum length
 * @param identifier whether only letters, marks, digits and separators are allowed
 * @param scripts how far scripts may mix, one of {@link #SCRIPTS}
 * @param separatorsAt where {@code separators} was written; null when it is the default
 */
public record SurfaceSettings(int minLength, int maxLength, String separators,
    boolean allowEmpty, boolean identifier, String scripts, ModerationSettings.Where separatorsAt) {

  /** The surfaces that have rules of their own (reactions are checked against the palette). */
  public static final List<String> NAMES = List.of("username", "display_name", "room_name");

  /** The script mixing levels, lower case as written. */
  public static final List<String> SCRIPTS = List.of("single", "highly_restrictive",
      "moderately_restrictive", "any");

  /** Longest length a surface may allow. */
  static final int MAX_LENGTH = 256;

  /** The rules of {@code surface} (one of {@link #NAMES}) when the policy sets none. */
  public static SurfaceSettings defaults(String surface) {
    return switch (surface) {
      case "username" -> new SurfaceSettings(3, 20, "-_", false, true, "highly_restrictive",
          null);
      case "display_name" -> new SurfaceSettings(1, 32, "-_.", false, false,
          "moderately_restrictive", null);
      case "room_name" -> new SurfaceSettings(3, 50, "-_.!", true, false,
          "moderately_restrictive", null);
      default -> throw new IllegalArgumentException("surface : \"" + surface
          + "\" (expected: one of " + String.join(", ", NAMES) + ")");
    };
  }
}
