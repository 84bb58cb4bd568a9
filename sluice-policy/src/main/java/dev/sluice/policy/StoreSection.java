package dev.sluice.policy;

import dev.sluice.core.Circuit;
import dev.sluice.core.InvalidValueException;
import dev.sluice.policy.Values.Parser;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * The {@code store:} section: where counters live, the circuit in front of Redis and how long
 * {@code sluice serve} waits for it at start. The circuit's defaults and ranges are the Redis
 * store's own ({@link Circuit}): each value is parsed here and handed to its setter,
 * whose {@link InvalidValueException} becomes an error at the value's file and line.
 */
final class StoreSection {

  private static final Field<StoreSettings, String> URI = Field.of("uri",
      "memory, redis://, rediss:// or redis-cluster:// URI", Values::storeUri,
      StoreSettings::uri, Values::redact);
  private static final Field<StoreSettings, Integer> MAX_KEYS = Field.of("maxKeys",
      "a whole number in 1..2147483647", Values.integer(1, Integer.MAX_VALUE),
      StoreSettings::maxKeys);
  private static final Field<StoreSettings, String> PREFIX = Field.of("keyPrefix",
      "a short string like sluice:", text -> {
        if (text.length() > 64 || text.matches(".*[\\s{}].*")) {
          throw new IllegalArgumentException("up to 64 characters without spaces or braces");
        }
        return text;
      }, StoreSettings::keyPrefix);
  private static final Field<StoreSettings, Duration> DEADLINE = Field.duration("deadline",
      "a duration in 1ms..1m, like 50ms", Values.within(Duration.ofMillis(1),
          Duration.ofMinutes(1)), StoreSettings::deadline);
  private static final Field<StoreSettings, Boolean> FALLBACK = Field.of("localFallback",
      "true or false", Values.BOOLEAN, StoreSettings::localFallback);
  private static final Field<StoreSettings, Duration> STARTUP_WAIT = Field.duration(
      "startupWait", "a duration in 0s..5m, like 10s", Values.within(Duration.ZERO,
          Duration.ofMinutes(5)), StoreSettings::startupWait);
  private static final Fields<StoreSettings> FIELDS = new Fields<>(URI, MAX_KEYS, PREFIX,
      DEADLINE, FALLBACK, STARTUP_WAIT);

  static final List<String> KEYS = java.util.stream.Stream.concat(FIELDS.keys().stream(),
      java.util.stream.Stream.of("circuit")).toList();
  private static final Parser<Integer> PERCENT = whole("a percentage like 50", "%");
  private static final Parser<Integer> COUNT = whole("a whole number like 100", "");
  private static final Parser<Optional<Duration>> DEADLINE_OR_DURATION = text ->
      text.strip().equals("deadline") ? Optional.empty() : Optional.of(Durations.parse(text));

  // The circuit's ranges are its builder's: each value goes to its setter, which checks it.
  private static final Field<Circuit, Integer> FAILURE_RATE = Field.of("failureRate",
      "a percentage like 50", PERCENT, Circuit::failureRate);
  private static final Field<Circuit, Integer> SLOW_CALL_RATE = Field.of("slowCallRate",
      "a percentage like 100", PERCENT, Circuit::slowCallRate);
  private static final Field<Circuit, Optional<Duration>> SLOW_CALL = Field.of("slowCall",
      "deadline, or a duration like 30ms", DEADLINE_OR_DURATION,
      c -> Optional.ofNullable(c.slowCall()), v -> v.map(Durations::format).orElse("deadline"));
  private static final Field<Circuit, Duration> WINDOW = Field.duration("window",
      "a duration like 2s", Values.DURATION, Circuit::window);
  private static final Field<Circuit, Integer> MINIMUM_CALLS = Field.of("minimumCalls",
      "a whole number like 100", COUNT, Circuit::minimumCalls);
  private static final Field<Circuit, Duration> OPEN = Field.duration("open",
      "a duration like 500ms", Values.DURATION, Circuit::open);
  private static final Field<Circuit, Integer> HALF_OPEN_CALLS = Field.of("halfOpenCalls",
      "a whole number like 3", COUNT, Circuit::halfOpenCalls);
  private static final Fields<Circuit> CIRCUIT = new Fields<>(FAILURE_RATE, SLOW_CALL_RATE,
      SLOW_CALL, WINDOW, MINIMUM_CALLS, OPEN, HALF_OPEN_CALLS);

  static final List<String> CIRCUIT_KEYS = CIRCUIT.keys();

  private StoreSection() {}

  /** A whole number, with an optional unit after it; the range is the setter's to check. */
  private static Parser<Integer> whole(String expected, String unit) {
    return text -> {
      String t = text.strip();
      if (!unit.isEmpty() && t.endsWith(unit)) {
        t = t.substring(0, t.length() - unit.length()).strip();
      }
      try {
        return Integer.parseInt(t.replace("_", ""));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(expected);
      }
    };
  }

  /** The section's settings (defaults for what it leaves out). */
  static StoreSettings read(Walk walk, Mapping doc) {
    StoreSettings d = StoreSettings.defaults();
    Mapping o = doc.section("store", KEYS, "a mapping");
    if (o == null) {
      return d;
    }
    Fields<StoreSettings>.Row r = FIELDS.read(o, d);
    Circuit circuit = circuit(walk, o, d.circuit());
    return new StoreSettings(r.get(URI), r.get(MAX_KEYS), r.get(PREFIX), r.get(DEADLINE),
        r.get(FALLBACK), circuit, r.get(STARTUP_WAIT));
  }

  /** The section as the effective policy shows it (the URI without its password). */
  static Map<String, Object> render(StoreSettings s) {
    Map<String, Object> m = FIELDS.render(s);
    m.put("circuit", CIRCUIT.render(s.circuit()));
    return m;
  }

  private static Circuit circuit(Walk walk, Mapping store, Circuit d) {
    Node n = store.node("circuit");
    if (n == null) {
      return d;
    }
    Mapping c = Mapping.of(walk, n, store.path("circuit"), CIRCUIT_KEYS,
        "a mapping with " + String.join(", ", CIRCUIT_KEYS));
    if (c == null) {
      return d;
    }
    Circuit.Builder b = d.toBuilder();
    Fields<Circuit>.Row r = CIRCUIT.read(c, d);
    set(walk, c, FAILURE_RATE, () -> b.failureRate(r.get(FAILURE_RATE)));
    set(walk, c, SLOW_CALL_RATE, () -> b.slowCallRate(r.get(SLOW_CALL_RATE)));
    set(walk, c, SLOW_CALL, () -> b.slowCall(r.get(SLOW_CALL).orElse(null)));
    set(walk, c, WINDOW, () -> b.window(r.get(WINDOW)));
    set(walk, c, MINIMUM_CALLS, () -> b.minimumCalls(r.get(MINIMUM_CALLS)));
    set(walk, c, OPEN, () -> b.open(r.get(OPEN)));
    set(walk, c, HALF_OPEN_CALLS, () -> b.halfOpenCalls(r.get(HALF_OPEN_CALLS)));
    return b.build();
  }

  /** Hands {@code f}'s value to the circuit's setter, whose refusal is an error at its line. */
  private static void set(Walk walk, Mapping c, Field<Circuit, ?> f, Runnable setter) {
    Node n = c.node(f.name);
    if (n == null) {
      return;   // the default, which the circuit holds already
    }
    try {
      setter.run();
    } catch (InvalidValueException e) {
      walk.error(n, c.path(f.name), Values.quote(((ScalarNode) n).getValue()), e.expected());
    }
  }

}
