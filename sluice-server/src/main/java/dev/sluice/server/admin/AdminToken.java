package dev.sluice.server.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The admin listener's bearer token, read once from a file at start ({@code --admin-token-file}):
 * the file's text without surrounding whitespace. Requests are compared by SHA-256 digest with
 * {@link MessageDigest#isEqual}, so the comparison takes the same time wherever a guess differs
 * and whatever its length. The log names a caller by {@link #id()}, never by the token.
 */
public final class AdminToken {

  private final byte[] digest;
  private final String id;

  private AdminToken(byte[] digest) {
    this.digest = digest;
    this.id = "token:" + HexFormat.of().formatHex(digest, 0, 4);
  }

  /**
   * Reads the token in {@code file}.
   *
   * @throws IllegalArgumentException naming the flag, the file and what is wrong
   */
  public static AdminToken read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("--admin-token-file : " + file
          + " (expected: a readable file holding the token; " + e + ")");
    }
    if (text.length() < 16 || text.chars().anyMatch(c -> c <= ' ' || c >= 0x7f)) {
      throw new IllegalArgumentException("--admin-token-file : " + file
          + " (expected: one token of at least 16 printable ASCII characters, no spaces)");
    }
    return new AdminToken(sha256(text));
  }

  /** True when {@code authorization} is {@code Bearer <this token>}. */
  boolean accepts(String authorization) {
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return false;
    }
    return MessageDigest.isEqual(digest, sha256(authorization.substring(7).strip()));
  }

  /** How the log names callers holding this token: a digest prefix, safe to show. */
  String id() {
    return id;
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is required of every JVM", e);
    }
  }
}
