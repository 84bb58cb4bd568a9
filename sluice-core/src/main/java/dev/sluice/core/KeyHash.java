package dev.sluice.core;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.internal.DottedQuad;
import java.security.SecureRandom;

/**
 * The in-memory store's key: 128 bits hashed from the rule and the identity's dimension values,
 * without building a string.
 *
 * <p><b>Keyed.</b> Both 64-bit lanes start from secrets drawn from {@link SecureRandom} when the
 * class loads, so a client who picks header values cannot compute which of them collide and
 * cannot pile keys onto one probe sequence of the table.
 *
 * <p><b>Why 128 bits never merge two identities in practice.</b> The table compares all 128 bits
 * (127 after the flag bit), so two identities share state only if both lanes collide. For n keys
 * alive at once, the chance that any pair does is at most n^2 / 2^128: about 3e-21 for a billion
 * keys, far below the odds of a memory error flipping a bit of the state itself. A client cannot
 * search for a collision offline without the secrets.
 *
 * <p><b>Equal text, equal key.</b> An address hashes as its 128 bits and prefix; a text value
 * that is an address's canonical text hashes the same way, so {@code Identity.ip("1.2.3.4")} and
 * {@code Identity.ip(ClientAddress.ipv4(...))} share a bucket, exactly as their Redis keys (the
 * text) do. Any other text hashes its UTF-16 units with its length. A missing or blank value
 * hashes as the rule's shared bucket, which no value can equal.
 */
final class KeyHash {

  private static final long K1;
  private static final long K2;
  private static final long SEED1;
  private static final long SEED2;

  private static final String IP = "ip";

  /** IPv4 addresses are IPv4-mapped IPv6: {@code ::ffff:a.b.c.d}. */
  private static final long MAPPED = 0xFFFF_0000_0000L;
  private static final long TAG_ADDRESS = 0x61646472L;
  private static final long TAG_IPV4 = 0xF434_0000_0000_0000L;
  private static final long TAG_TEXT = 0x74657874L;
  private static final long TAG_SHARED = 0x7368726dL;
  private static final long TAG_OVERFLOW = 0x6f766572L;

  static {
    SecureRandom random = new SecureRandom();
    K1 = random.nextLong() | 1;
    K2 = random.nextLong() | 1;
    SEED1 = random.nextLong();
    SEED2 = random.nextLong();
  }

  /** Lane values; the caller owns one and reads {@link #a} and {@link #b} after each call. */
  long a;
  long b;

  private KeyHash() {}

  static KeyHash create() {
    return new KeyHash();
  }

  /** The 64-bit product's halves folded together: a keyed, invertible-looking mix. */
  private static long fold(long x, long k) {
    return Math.multiplyHigh(x, k) ^ (x * k);
  }

  private void absorb(long w) {
    a = fold(a ^ w, K1) + Long.rotateLeft(w, 29);
    b = fold(b ^ w, K2) + Long.rotateLeft(w, 43);
  }

  /** The seeds of a rule's (or cooldown's) keys, from its name; computed once per rule. */
  static long[] seeds(String name) {
    KeyHash h = new KeyHash();
    h.a = SEED1;
    h.b = SEED2;
    h.text(name);
    return new long[] {h.a, h.b};
  }

  /**
   * Hashes the key of {@code identity} under {@code rule}; the result is in {@link #a} (its top
   * bit set, so no key is 0 or 1, which mark empty and deleted slots) and {@link #b}.
   */
  void of(Rule rule, Identity identity) {
    a = rule.seedA();
    b = rule.seedB();
    String[] dims = rule.dimensionArray();
    for (String dimension : dims) {
      Object value = identity.value(dimension);
      if (value instanceof ClientAddress address) {
        address(address);
        continue;
      }
      String s = (String) value;
      // The ip dimension's text was parsed when the identity was built.
      long v4 = s == null ? -1 : IP.equals(dimension) ? identity.ipv4() : DottedQuad.parse(s);
      if (v4 >= 0) {
        address(128, 0, MAPPED | v4);
      } else if (s == null || s.isBlank()) {
        absorb(TAG_SHARED);
        text(rule.sharedBucket());
      } else {
        ClientAddress parsed = s.indexOf(':') >= 0 ? ClientAddress.parse(s) : null;
        if (parsed != null) {
          address(parsed);
        } else {
          text(s);
        }
      }
    }
    finish();
  }

  /** Hashes a string key (cooldowns) under its owner's seeds. */
  void of(long seedA, long seedB, String key) {
    a = seedA;
    b = seedB;
    text(key);
    finish();
  }

  /** The key of the overflow bucket of the owner with these seeds, which no identity can equal. */
  void overflow(long seedA, long seedB) {
    a = seedA;
    b = seedB;
    absorb(TAG_OVERFLOW);
    finish();
  }

  private void address(ClientAddress address) {
    if (!address.known()) {
      text(address.toString());
      return;
    }
    address(address.prefixLength(), address.high(), address.low());
  }

  private void address(int prefix, long high, long low) {
    if (prefix == 128 && high == 0 && (low >>> 32) == 0xFFFFL) {
      // IPv4, the common case, in one word; its upper half is no text's length (< 2^31).
      absorb(TAG_IPV4 | (low & 0xFFFF_FFFFL));
      return;
    }
    absorb(TAG_ADDRESS ^ ((long) prefix << 32));
    absorb(high);
    absorb(low);
  }

  private void text(String s) {
    int n = s.length();
    absorb(TAG_TEXT ^ ((long) n << 32));
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      absorb(s.charAt(i) | (long) s.charAt(i + 1) << 16 | (long) s.charAt(i + 2) << 32
          | (long) s.charAt(i + 3) << 48);
    }
    if (i < n) {
      long w = 0;
      for (int shift = 0; i < n; i++, shift += 16) {
        w |= (long) s.charAt(i) << shift;
      }
      absorb(w);
    }
  }

  private void finish() {
    long x = fold(a ^ Long.rotateLeft(b, 17), K2);
    long y = fold(b ^ Long.rotateLeft(a, 31), K1);
    a = x | Long.MIN_VALUE;
    b = y;
  }
}
