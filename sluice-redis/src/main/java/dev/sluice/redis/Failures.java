package dev.sluice.redis;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;

/** Reads Lettuce's exceptions: what went wrong, in words an operator can act on. */
final class Failures {

  private Failures() {}

  /**
   * True when Redis refused the credentials: {@code NOAUTH} (none given, one required),
   * {@code WRONGPASS} (Redis 6+), {@code ERR invalid password} (Redis 5), or a password given to
   * a server that has none. Lettuce wraps them in "Unable to connect to ...".
   */
  static boolean authentication(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage();
      if (m != null && (m.startsWith("NOAUTH") || m.startsWith("WRONGPASS")
          || m.startsWith("ERR invalid password")
          || m.contains("called without any password configured"))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The innermost message ("Connection refused: /127.0.0.1:6379", "WRONGPASS invalid
   * username-password pair or user is disabled."), not Lettuce's "Unable to connect to
   * 127.0.0.1/&lt;unresolved&gt;:6379" around it.
   */
  static String reason(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException
        || t.getMessage() == null || t.getMessage().startsWith("Unable to connect"))
        && t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String m = t.getMessage();
    // Netty's native transport prefixes the errno text: "finishConnect(..) failed with
    // error(-111): Connection refused: /127.0.0.1:6379"; the errno text is the news.
    return m == null ? t.getClass().getSimpleName()
        : NATIVE_PREFIX.matcher(m.strip()).replaceFirst("");
  }

  private static final Pattern NATIVE_PREFIX =
      Pattern.compile("^\\w+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ");
}
