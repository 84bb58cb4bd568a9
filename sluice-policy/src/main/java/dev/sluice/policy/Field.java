package dev.sluice.policy;

import dev.sluice.policy.Values.Parser;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * One key of a section, named once: what it expects, how its text is read, where its value
 * lives in the section's settings and how the effective policy shows it. A section's
 * {@link Fields} give its keys, read it (each default is the default settings' value) and render
 * it, so a new key is its row, the code that uses the value, docs/CONFIG.md and the goldens.
 *
 * @param <S> the section's settings
 * @param <T> the value
 */
final class Field<S, T> {

  final String name;
  private final String expected;
  private final Parser<T> parser;
  private final Parser<?> item;
  private final Function<S, T> value;
  private final Function<T, Object> shown;

  private Field(String name, String expected, Parser<T> parser, Parser<?> item,
      Function<S, T> value, Function<T, Object> shown) {
    this.name = name;
    this.expected = expected;
    this.parser = parser;
    this.item = item;
    this.value = value;
    this.shown = shown;
  }

  /** A scalar shown as {@code shown} makes it (a string, number or boolean; null: left out). */
  static <S, T> Field<S, T> of(String name, String expected, Parser<T> parser,
      Function<S, T> value, Function<T, Object> shown) {
    return new Field<>(name, expected, parser, null, value, shown);
  }

  /** A scalar shown as it is: a string, a number or a boolean. */
  static <S, T> Field<S, T> of(String name, String expected, Parser<T> parser,
      Function<S, T> value) {
    return of(name, expected, parser, value, v -> v);
  }

  /** A duration, shown like {@code 30s}. */
  static <S> Field<S, Duration> duration(String name, String expected, Parser<Duration> parser,
      Function<S, Duration> value) {
    return of(name, expected, parser, value, Durations::format);
  }

  /** A size in bytes, shown like {@code 64KiB}. */
  static <S> Field<S, Long> size(String name, String expected, Parser<Long> parser,
      Function<S, Long> value) {
    return of(name, expected, parser, value, Durations::formatSize);
  }

  /**
   * A key whose value its section reads itself (a mapping checked against other sections);
   * the table names it and renders it. {@link #read} gives the default.
   */
  static <S, T> Field<S, T> readBySection(String name, Function<S, T> value) {
    return readBySection(name, value, v -> v);
  }

  /** Read by its section, shown as {@code shown} makes it (a nested section's rendering). */
  static <S, T> Field<S, T> readBySection(String name, Function<S, T> value,
      Function<T, Object> shown) {
    return new Field<>(name, null, null, null, value, shown);
  }

  /** A list of {@code item}s (a YAML sequence, or comma-separated text), shown as a list. */
  static <S, E> Field<S, List<E>> list(String name, String expected, Parser<E> item,
      Function<S, List<E>> value) {
    return list(name, expected, item, value, v -> v);
  }

  /** A list shown as {@code shown} makes it (null: left out). */
  static <S, E> Field<S, List<E>> list(String name, String expected, Parser<E> item,
      Function<S, List<E>> value, Function<List<E>, Object> shown) {
    return new Field<>(name, expected, null, item, value, shown);
  }

  /** The value {@code m} gives, or the one {@code defaults} has. */
  @SuppressWarnings("unchecked")
  T read(Mapping m, S defaults) {
    T d = value.apply(defaults);
    if (parser == null && item == null) {
      return d;
    }
    if (item == null) {
      return m.get(name, expected, parser, d);
    }
    return (T) m.list(name, expected, (Parser<Object>) item, (List<Object>) d);
  }

  /** How the effective policy shows this key of {@code s}; null to leave it out. */
  Object show(S s) {
    T v = value.apply(s);
    return v == null ? null : shown.apply(v);
  }
}
