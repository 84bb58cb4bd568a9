package dev.sluice.core.http;

/**
 * Where an adapter's response headers go: Netty's {@code HttpHeaders}, a servlet response. The
 * shared code says what to write; each adapter says how.
 */
@FunctionalInterface
public interface Headers {

  /** Sets {@code name} to {@code value}, replacing any value it had. */
  void set(String name, String value);

  /**
   * Sets {@code name} to {@code text} then {@code number} in decimal ({@code text} may be
   * empty): by default as one string; a writer that prints numbers itself makes none.
   */
  default void set(String name, String text, long number) {
    set(name, text.isEmpty() ? Long.toString(number) : text + number);
  }

  /** Sets {@code name} to {@code a}, {@code m}, {@code b}, {@code n} in turn, as above. */
  default void set(String name, String a, long m, String b, long n) {
    set(name, a + m + b + n);
  }

  /** Adds a value to {@code name} (for {@code Vary}); by default the same as {@link #set}. */
  default void add(String name, String value) {
    set(name, value);
  }
}
