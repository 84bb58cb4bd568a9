package dev.sluice.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The Lua scripts, read from resources once, with their SHA-1 digests for EVALSHA. */
final class Scripts {

  static final Script EVALUATE = load("common.lua", "limits.lua", "evaluate.lua");
  static final Script REFUND = load("common.lua", "limits.lua", "refund.lua");
  static final Script COOLDOWN = load("common.lua", "cooldown.lua");
  static final Script LEASES = load("common.lua", "leases.lua");

  private Scripts() {}

  /** A script body and its digest. */
  record Script(String body, String sha) {}

  private static Script load(String... parts) {
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
    String text = body.toString();
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1")
          .digest(text.getBytes(StandardCharsets.UTF_8));
      return new Script(text, HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
