package dev.sluice.core;

import java.util.Arrays;

/**
 * Who is calling: named dimensions such as {@code ip}, {@code user}, {@code session},
 * {@code participant} or {@code event}, each with a value. Immutable.
 *
 * <p>A rule's key template picks the dimensions it counts by. A dimension that is absent (or
 * blank) puts the caller in a named shared bucket, never outside the limit.
 */
public final class Identity {

  private static final Identity EMPTY = new Identity(new String[0]);

  private final String[] pairs;

  private Identity(String[] pairs) {
    this.pairs = pairs;
  }

  /** An identity with no dimensions: every rule puts it in the shared bucket. */
  public static Identity empty() {
    return EMPTY;
  }

  /** An identity with one dimension, {@code ip}. */
  public static Identity ip(String address) {
    return EMPTY.with("ip", address);
  }

  /**
   * Returns a copy with {@code dimension} set to {@code value}; a null value removes it.
   *
   * @throws IllegalArgumentException if the dimension name is not a simple word
   */
  public Identity with(String dimension, String value) {
    KeyTemplate.checkDimension(dimension);
    int i = indexOf(dimension);
    String[] next;
    if (i >= 0) {
      if (value == null) {
        next = new String[pairs.length - 2];
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
    return new Identity(next);
  }

  /** The value of a dimension, or null when absent. */
  public String get(String dimension) {
    int i = indexOf(dimension);
    return i < 0 ? null : pairs[i + 1];
  }

  private int indexOf(String dimension) {
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i].equals(dimension)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Identity other && Arrays.equals(pairs, other.pairs);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(pairs);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Identity{");
    for (int i = 0; i < pairs.length; i += 2) {
      sb.append(i == 0 ? "" : ", ").append(pairs[i]).append('=')
          .append(KeyTemplate.escape(pairs[i + 1]));
    }
    return sb.append('}').toString();
  }
}
