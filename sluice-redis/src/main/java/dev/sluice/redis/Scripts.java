package dev.sluice.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua code, read from resources once, in two forms.
 *
 * <p><b>A Redis 7 function library</b> ({@link #LIBRARY}): every entry point in one library,
 * loaded once with {@code FUNCTION LOAD} and called with {@code FCALL}. Why: an {@code EVALSHA}
 * runs the whole script body on every call, re-creating some thirty helper closures and tables
 * before doing any work (about 2.4 us of Redis CPU per call on a 2-vCPU VM); a library's body
 * runs once at load. The library and its functions are named after a digest of the code
 * ({@code sluice_<12 hex>_evaluate}), so instances running different versions of Sluice against
 * one Redis never replace each other's functions (each old version leaves one small library
 * behind).
 *
 * <p><b>One EVAL script per entry point</b> ({@link Script#body()}, {@link Script#sha()}): the
 * same text plus a {@code return entry(KEYS, ARGV)}, for servers without {@code FUNCTION}
 * (Redis 6 and older) and while a flushed library is being reloaded.
 */
final class Scripts {

  private static final String[] LIBRARY_PARTS = {"common.lua", "leaky.lua", "limits.lua",
      "held.lua", "evaluate.lua", "refund.lua", "bucket.lua", "cooldown.lua", "leases.lua",
      "admin.lua", "reserve.lua"};

  private static final String CODE_DIGEST = sha1(concat(LIBRARY_PARTS)).substring(0, 12);

  static final Script EVALUATE = script("evaluate",
      "common.lua", "leaky.lua", "limits.lua", "evaluate.lua");
  static final Script REFUND = script("refund",
      "common.lua", "leaky.lua", "limits.lua", "refund.lua");
  static final Script BUCKET = script("bucket", "common.lua", "bucket.lua");
  static final Script BUCKETS = script("buckets", "common.lua", "bucket.lua");
  static final Script COOLDOWN = script("cooldown", "common.lua", "held.lua", "cooldown.lua");
  static final Script RESERVE = script("reserve",
      "common.lua", "leaky.lua", "limits.lua", "held.lua", "reserve.lua");
  static final Script SETTLE = script("settle",
      "common.lua", "leaky.lua", "limits.lua", "held.lua", "reserve.lua");
  static final Script LEASES = script("leases", "common.lua", "leases.lua");
  static final Script PEEK = script("peek", "common.lua", "leaky.lua", "limits.lua", "admin.lua");
  static final Script UNBAN = script("unban", "common.lua", "leaky.lua", "limits.lua", "admin.lua");
  static final Script NOTE = script("note", "common.lua", "leaky.lua", "limits.lua", "admin.lua");
  static final Script BAN = script("ban", "common.lua", "leaky.lua", "limits.lua", "admin.lua");

  /** The library's name in {@code FUNCTION LIST}. */
  static final String LIBRARY_NAME = "sluice_" + CODE_DIGEST;

  /** The text for {@code FUNCTION LOAD}. */
  static final String LIBRARY = library(EVALUATE, REFUND, BUCKET, BUCKETS, COOLDOWN,
      LEASES, PEEK, UNBAN, NOTE, BAN, RESERVE, SETTLE);

  private Scripts() {}

  /** One entry point: its EVAL body and digest, and its function name in the library. */
  record Script(String entry, String body, String sha, String function) {}

  private static Script script(String entry, String... parts) {
    String body = concat("eval.lua") + concat(parts) + "return " + entry + "(KEYS, ARGV)\n";
    return new Script(entry, body, sha1(body), "sluice_" + CODE_DIGEST + "_" + entry);
  }

  private static String library(Script... entries) {
    StringBuilder sb = new StringBuilder("#!lua name=").append("sluice_").append(CODE_DIGEST)
        .append('\n').append(concat(LIBRARY_PARTS));
    for (Script s : entries) {
      sb.append("redis.register_function('").append(s.function()).append("', ")
          .append(s.entry()).append(")\n");
    }
    return sb.toString();
  }

  private static String concat(String... parts) {
    StringBuilder body = new StringBuilder();
    for (String part : parts) {
      try (InputStream in = Scripts.class.getResourceAsStream(part)) {
        if (in == null) {
          throw new IllegalStateException("missing resource dev/sluice/redis/" + part);
        }
        body.append(new String(in.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return body.toString();
  }

  private static String sha1(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1")
          .digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
