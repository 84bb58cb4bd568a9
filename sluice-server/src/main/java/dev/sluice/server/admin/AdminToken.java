package dev.sluice.server.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;

/**
 * The admin listener's bearer token, read once at start: from the operator's file
 * ({@code --admin-token-file}), or from the file sluice generates when none is given
 * ({@link #generated}). The token is the file's text without surrounding whitespace. Requests
 * are compared by SHA-256 digest with {@link MessageDigest#isEqual}, so the comparison takes the
 * same time wherever a guess differs and whatever its length. The log names a caller by
 * {@link #id()}, never by the token.
 */
public final class AdminToken {

  /** A generated token: 32 random bytes, 43 characters of URL-safe base64. */
  private static final int RANDOM_BYTES = 32;
  private static final Set<PosixFilePermission> OWNER_ONLY_FILE =
      PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OWNER_ONLY_DIR =
      PosixFilePermissions.fromString("rwx------");

  /**
   * The token in a generated file: the token, the file, whether this start created it, and a
   * warning when the file is readable by others (null when it is not).
   */
  public record Generated(AdminToken token, Path file, boolean created, String warning) {}

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

  /**
   * Where a token is generated when none is given: {@code $XDG_STATE_HOME/sluice/admin-token},
   * else {@code $HOME/.local/state/sluice/admin-token} (the JVM's {@code user.home} when
   * {@code HOME} is not set). {@code sluice admin} looks there too.
   */
  public static Path defaultFile(Map<String, String> env) {
    String state = env.get("XDG_STATE_HOME");
    if (state != null && !state.isBlank() && Path.of(state.trim()).isAbsolute()) {
      return Path.of(state.trim(), "sluice", "admin-token");
    }
    String home = env.get("HOME");
    if (home == null || home.isBlank()) {
      home = System.getProperty("user.home");
    }
    return Path.of(home.trim(), ".local", "state", "sluice", "admin-token");
  }

  /**
   * The token in {@code file}, generated first when the file does not exist: its directory is
   * made owner-only ({@code 0700}) when this creates it, the file is written owner-only
   * ({@code 0600}) under another name and linked into place, so two servers starting at once
   * both end up with the one token, whole.
   *
   * @throws IOException when the file can be neither created nor read
   */
  public static Generated generated(Path file) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    boolean created = false;
    if (!Files.exists(file)) {
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIR));
      ownersOnly(dir);
      byte[] random = new byte[RANDOM_BYTES];
      new SecureRandom().nextBytes(random);
      String token = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
      Path tmp = Files.createTempFile(dir, ".admin-token", ".tmp",
          PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE));
      try {
        Files.writeString(tmp, token + "\n", StandardCharsets.UTF_8);
        Files.createLink(file, tmp);
        created = true;
      } catch (FileAlreadyExistsException e) {
        // another server made it first: its token is the one
      } finally {
        Files.deleteIfExists(tmp);
      }
    }
    ownersOnly(dir);
    UserPrincipal owner = Files.getOwner(file);
    UserPrincipal me = file.getFileSystem().getUserPrincipalLookupService()
        .lookupPrincipalByName(System.getProperty("user.name"));
    if (!owner.equals(me)) {
      throw new IOException(file + " belongs to " + owner.getName() + ", not to "
          + me.getName() + " who runs the server: a token someone else wrote is theirs");
    }
    String text = Files.readString(file, StandardCharsets.UTF_8).strip();
    if (text.length() < 16 || text.chars().anyMatch(c -> c <= ' ' || c >= 0x7f)) {
      throw new IOException(file + " does not hold a token (at least 16 printable ASCII "
          + "characters, no spaces); delete it and a new one is generated");
    }
    String warning = null;
    try {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
      if (!OWNER_ONLY_FILE.containsAll(perms)) {
        warning = "the admin token file " + file + " is readable by others ("
            + PosixFilePermissions.toString(perms) + "); chmod 600 it";
      }
    } catch (UnsupportedOperationException e) {
      warning = "cannot check who may read " + file + " (no POSIX permissions here)";
    }
    return new Generated(new AdminToken(sha256(text)), file, created, warning);
  }

  /**
   * A directory others may write to could get a token of theirs put in it (or ours replaced)
   * before the server reads it.
   */
  private static void ownersOnly(Path dir) throws IOException {
    try {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
      if (perms.contains(PosixFilePermission.GROUP_WRITE)
          || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
        throw new IOException(dir + " may be written by others ("
            + PosixFilePermissions.toString(perms) + "): chmod 700 it, or give "
            + "--admin-token-file");
      }
    } catch (UnsupportedOperationException e) {
      // no POSIX permissions here: the warning about the file says so
    }
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
