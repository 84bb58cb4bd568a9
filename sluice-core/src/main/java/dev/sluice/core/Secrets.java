package dev.sluice.core;

/**
 * The one password mask for everything Sluice prints: a store URI in a message, a log line, the
 * effective policy, a third-party library's line passing through the server's log.
 *
 * <p>Every {@code scheme://userinfo@} in a text loses its secret: {@code redis://app:s3cret@h}
 * becomes {@code redis://app:***@h}, {@code redis://:s3cret@h} becomes {@code redis://:***@h},
 * and {@code redis://s3cret@h} (Redis reads a lone userinfo as the password) becomes
 * {@code redis://***@h}. The userinfo runs to the last {@code @} before the next {@code /},
 * whitespace or quote, so a password with an {@code @} in it is masked whole.
 */
public final class Secrets {

  private static final String MASK = "***";

  private Secrets() {}

  /** {@code text} with every URI password replaced by {@code ***}; null stays null. */
  public static String mask(String text) {
    if (text == null) {
      return null;
    }
    int scheme = text.indexOf("://");
    if (scheme < 0) {
      return text;
    }
    StringBuilder sb = null;
    int copied = 0;
    while (scheme >= 0) {
      int start = scheme + 3;
      int end = start;
      int at = -1;
      while (end < text.length() && !endsAuthority(text.charAt(end))) {
        if (text.charAt(end) == '@') {
          at = end;
        }
        end++;
      }
      if (at > start) {
        int colon = text.indexOf(':', start);
        int secret = colon >= 0 && colon < at ? colon + 1 : start;
        boolean masked = secret + MASK.length() == at && text.startsWith(MASK, secret);
        if (secret < at && !masked) {
          if (sb == null) {
            sb = new StringBuilder(text.length());
          }
          sb.append(text, copied, secret).append(MASK);
          copied = at;
        }
      }
      scheme = text.indexOf("://", end);
    }
    if (sb == null) {
      return text;
    }
    return sb.append(text, copied, text.length()).toString();
  }

  private static boolean endsAuthority(char c) {
    return c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '<'
        || c == '>';
  }
}
