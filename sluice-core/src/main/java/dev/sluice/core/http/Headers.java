package dev.sluice.core.http;

/**
 * Where an adapter's response headers go: Netty's {@code HttpHeaders}, a servlet response. The
 * shared code says what to write; each adapter says how.
 */
@FunctionalInterface
public interface Headers {

  /** Sets {@code name} to {@code value}, replacing any value it had. */
  void set(String name, String value);

  /** Adds a value to {@code name} (for {@code Vary}); by default the same as {@link #set}. */
  default void add(String name, String value) {
    set(name, value);
  }
}
