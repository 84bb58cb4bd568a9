package dev.sluice.core.internal;

/**
 * An HMAC-SHA256 key (RFC 2104) whose padded blocks are made once: an HMAC is then computed on
 * a {@link Sha256} the caller owns and allocates nothing, where {@code Mac.doFinal} allocates
 * two arrays a call. Immutable.
 */
public final class HmacKey {

  private final byte[] inner = new byte[Sha256.BLOCK];
  private final byte[] outer = new byte[Sha256.BLOCK];

  public HmacKey(byte[] key) {
    byte[] k = key.length > Sha256.BLOCK ? Sha256.of(key) : key;
    for (int i = 0; i < Sha256.BLOCK; i++) {
      byte b = i < k.length ? k[i] : 0;
      inner[i] = (byte) (b ^ 0x36);
      outer[i] = (byte) (b ^ 0x5c);
    }
  }

  /** Starts a message under this key on {@code s}: update it, then {@link #mac}. */
  public Sha256 begin(Sha256 s) {
    return s.reset().update(inner, 0, Sha256.BLOCK);
  }

  /**
   * Ends the message begun on {@code s}: the 32-byte MAC into {@code out} at {@code off}
   * ({@code out} also holds the inner digest meanwhile, so it needs 32 bytes from {@code off}).
   */
  public void mac(Sha256 s, byte[] out, int off) {
    s.digest(out, off);
    s.reset().update(outer, 0, Sha256.BLOCK).update(out, off, Sha256.LENGTH).digest(out, off);
  }

  /** The MAC of {@code message}, for set-up and tests: allocates. */
  public byte[] mac(byte[] message) {
    byte[] out = new byte[Sha256.LENGTH];
    Sha256 s = new Sha256();
    begin(s).update(message, 0, message.length);
    mac(s, out, 0);
    return out;
  }
}
