package dev.sluice.gateway;

import dev.sluice.core.http.Headers;

/**
 * Writes limit headers as field lines into the connection's {@link HeadWriter}. Their names
 * are the same few constants on every response: each is encoded once and kept, looked up by
 * identity.
 */
final class FieldWriter implements Headers {

  private final HeadWriter out;
  /** Room for every name an answer writes (its own, the limit headers, CORS) many times over. */
  private final String[] names = new String[32];
  private final byte[][] encoded = new byte[32][];

  FieldWriter(HeadWriter out) {
    this.out = out;
  }

  @Override
  public void set(String name, String value) {
    out.put(encoded(name)).put(value).crlf();
  }

  @Override
  public void set(String name, String text, long number) {
    out.put(encoded(name)).put(text).putDecimal(number).crlf();
  }

  @Override
  public void set(String name, String a, long m, String b, long n) {
    out.put(encoded(name)).put(a).putDecimal(m).put(b).putDecimal(n).crlf();
  }

  private byte[] encoded(String name) {
    for (int i = 0; i < names.length; i++) {
      if (names[i] == name) {
        return encoded[i];
      }
      if (names[i] == null) {
        names[i] = name;
        encoded[i] = HeadWriter.ascii(name + ": ");
        return encoded[i];
      }
    }
    return HeadWriter.ascii(name + ": ");
  }
}
