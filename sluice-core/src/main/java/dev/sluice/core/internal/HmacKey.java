package dev.sluice.core.internal;

/**
 * An HMAC-SHA256 key (RFC 2104) with its inner and outer pads compressed once: an HMAC of a short
 * message then costs two compressions and allocates nothing ({@link #mac} with a
 * {@link Sha256} the caller owns). Immutable.
 */
public final class HmacKey {

  private final int[] inner = new int[8];
  private final int[] outer = new int[8];

  public HmacKey(byte[] key) {
    byte[] k = key.length > Sha256.BLOCK ? Sha256.of(key) : key;
    byte[] pad = new byte[Sha256.BLOCK];
    Sha256 s = new Sha256();
    for (int i = 0; i < Sha256.BLOCK; i++) {
      pad[i] = (byte) ((i < k.length ? k[i] : 0) ^ 0x36);
    }
    s.update(pad, 0, pad.length).midstate(inner);
    s.reset();
    for (int i = 0; i < Sha256.BLOCK; i++) {
      pad[i] = (byte) ((i < k.length ? k[i] : 0) ^ 0x5c);
    }
    s.update(pad, 0, pad.length).midstate(outer);
  }

  /** Starts a message under this key on {@code s}: update it, then {@link #mac}. */
  public Sha256 begin(Sha256 s) {
    return s.resume(inner, Sha256.BLOCK);
  }

  /**
   * Ends the message begun on {@code s}: the 32-byte MAC into {@code out} at {@code off}
   * ({@code out} also holds the inner digest meanwhile, so it needs 32 bytes from {@code off}).
   */
  public void mac(Sha256 s, byte[] out, int off) {
    s.digest(out, off);
    s.resume(outer, Sha256.BLOCK).update(out, off, Sha256.LENGTH).digest(out, off);
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
