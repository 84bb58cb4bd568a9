package dev.sluice.policy;

import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A section's {@link Field}s in file order: its keys, its reading and its rendering from one
 * table. The section builds its settings from a {@link Row} and checks what spans keys.
 */
final class Fields<S> {

  private final List<Field<S, ?>> fields;

  @SafeVarargs
  Fields(Field<S, ?>... fields) {
    this.fields = List.of(fields);
  }

  /** The keys, in file order (what the section's mapping may hold). */
  List<String> keys() {
    return fields.stream().map(f -> f.name).toList();
  }

  /** Every field's value from {@code m}, or from {@code defaults} where it leaves one out. */
  Row read(Mapping m, S defaults) {
    Row r = new Row();
    for (Field<S, ?> f : fields) {
      r.values.put(f, f.read(m, defaults));
    }
    return r;
  }

  /** {@code s} as the effective policy shows it; a null value is left out. */
  Map<String, Object> render(S s) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (Field<S, ?> f : fields) {
      Object v = f.show(s);
      if (v != null) {
        m.put(f.name, v);
      }
    }
    return m;
  }

  /** The values one reading gave, by field. */
  final class Row {

    private final Map<Field<S, ?>, Object> values = new IdentityHashMap<>();

    @SuppressWarnings("unchecked")
    <T> T get(Field<S, T> f) {
      return (T) values.get(f);
    }
  }
}
