package dev.sluice.core;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.internal.Checks;
import dev.sluice.core.internal.DottedQuad;
import java.util.Arrays;

/**
 * Who is calling: named dimensions such as {@code ip}, {@code user}, {@code session},
 * {@code participant} or {@code event}, each with a value. Immutable.
 *
 * <p>A rule's key template picks the dimensions it counts by. A dimension that is absent (or
 * blank) puts the caller in a named shared bucket, never outside the limit.
 *
 * <p>A value is text or a {@link ClientAddress}. The two are interchangeable: a text value that
 * is an address's canonical text ({@code "203.0.113.7"}) keys exactly like that address, so
 * {@code Identity.ip("203.0.113.7")} and {@code Identity.ip(resolver.resolve(...))} share a
 * bucket. The address form costs less per check: the in-memory store keys on its 128 bits.
 */
public final class Identity {

  private static final String IP = "ip";
  private static final Object[] NONE = new Object[0];
  private static final Identity EMPTY = new Identity(null, NONE);

  /** The {@code ip} dimension, kept apart because nearly every rule reads it. */
  private final Object ip;
  /** The {@code ip} text parsed once as a dotted quad, or -1: keys need not parse it again. */
  private final long ipv4;
  /** Other dimensions: name, value, name, value... */
  private final Object[] pairs;

  private Identity(Object ip, Object[] pairs) {
    this.ip = ip;
    this.ipv4 = ip instanceof String s ? DottedQuad.parse(s) : -1;
    this.pairs = pairs;
  }

  /** An identity with no dimensions: every rule puts it in the shared bucket. */
  public static Identity empty() {
    return EMPTY;
  }

  /** An identity with one dimension, {@code ip}; empty when {@code address} is null. */
  public static Identity ip(String address) {
    return address == null ? EMPTY : new Identity(address, NONE);
  }

  /** An identity with one dimension, {@code ip}; empty when {@code address} is null. */
  public static Identity ip(ClientAddress address) {
    return address == null ? EMPTY : new Identity(address, NONE);
  }

  /**
   * Returns a copy with {@code dimension} set to {@code value}; a null value removes it.
   *
   * @throws IllegalArgumentException if the dimension name is not a simple word
   */
  public Identity with(String dimension, String value) {
    return set(dimension, value);
  }

  /** Returns a copy with {@code dimension} set to an address; a null value removes it. */
  public Identity with(String dimension, ClientAddress value) {
    return set(dimension, value);
  }

  private Identity set(String dimension, Object value) {
    Checks.dimension(dimension);
    if (IP.equals(dimension)) {
      return value == ip ? this : new Identity(value, pairs);
    }
    int i = indexOf(dimension);
    Object[] next;
    if (i >= 0) {
      if (value == null) {
        next = new Object[pairs.length - 2];
        System.arraycopy(pairs, 0, next, 0, i);
        System.arraycopy(pairs, i + 2, next, i, pairs.length - i - 2);
      } else {
        next = pairs.clone();
        next[i + 1] = value;
      }
    } else if (value == null) {
      return this;
    } else {
      next = Arrays.copyOf(pairs, pairs.length + 2);
      next[pairs.length] = dimension;
      next[pairs.length + 1] = value;
    }
    return new Identity(ip, next);
  }

  /** True when the dimension has a value. */
  public boolean has(String dimension) {
    return value(dimension) != null;
  }

  /**
   * True when {@code dimension} holds exactly {@code value} (a String or a {@link ClientAddress},
   * as given to {@code with}; null: the dimension is absent). Unlike {@link #equals}, a text
   * value never matches an address: an adapter that finds the identity it would build already
   * made keeps that one instead of building it again.
   */
  public boolean holds(String dimension, Object value) {
    Object v = value(dimension);
    return v == null ? value == null : v.equals(value);
  }

  /** The number of dimensions that have a value. */
  public int size() {
    return (ip == null ? 0 : 1) + pairs.length / 2;
  }

  /** The value of a dimension as text, or null when absent. */
  public String get(String dimension) {
    Object v = value(dimension);
    return v == null ? null : v.toString();
  }

  /** The value of a dimension (a String or a {@link ClientAddress}), or null when absent. */
  Object value(String dimension) {
    if (dimension == IP || IP.equals(dimension)) {
      return ip;
    }
    int i = indexOf(dimension);
    return i < 0 ? null : pairs[i + 1];
  }

  /** The {@code ip} dimension's text as a dotted quad's 32 bits, or -1 when it is not one. */
  long ipv4() {
    return ipv4;
  }

  private int indexOf(String dimension) {
    for (int i = 0; i < pairs.length; i += 2) {
      Object name = pairs[i];
      if (name == dimension || name.equals(dimension)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Identity other) || other.pairs.length != pairs.length
        || !sameValue(ip, other.ip)) {
      return false;
    }
    for (int i = 0; i < pairs.length; i += 2) {
      if (!sameValue(pairs[i + 1], other.value((String) pairs[i]))) {
        return false;
      }
    }
    return true;
  }

  private static boolean sameValue(Object a, Object b) {
    return a == null ? b == null : b != null && a.toString().equals(b.toString());
  }

  @Override
  public int hashCode() {
    int h = ip == null ? 0 : ip.toString().hashCode();
    for (int i = 0; i < pairs.length; i += 2) {
      h += pairs[i].hashCode() ^ pairs[i + 1].toString().hashCode();
    }
    return h;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Identity{");
    if (ip != null) {
      sb.append("ip=").append(KeyTemplate.escape(ip.toString()));
    }
    for (int i = 0; i < pairs.length; i += 2) {
      sb.append(sb.length() > 9 ? ", " : "").append(pairs[i]).append('=')
          .append(KeyTemplate.escape(pairs[i + 1].toString()));
    }
    return sb.append('}').toString();
  }
}
