package dev.sluice.policy;

import dev.sluice.core.InvalidValueException;
import dev.sluice.policy.Values.Parser;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * One walk through a policy document: every error found with its file and line (not just the
 * first), the warnings, and the environment variables read. Sections read their values through
 * it, so each value is interpolated, parsed and reported the same way.
 */
final class Walk {

  final String file;
  final Path source;
  final Function<String, String> env;
  final List<ConfigError> errors = new ArrayList<>();
  final List<String> warnings = new ArrayList<>();
  /** Variables already warned about: one warning each, however many fields read them. */
  final Set<String> warned = new LinkedHashSet<>();
  final Set<String> referenced = new LinkedHashSet<>();
  /** Variables that switched a rule off: their "invalid value" warnings would be noise. */
  final Set<String> quiet = new LinkedHashSet<>();

  Walk(String file, Path source, Function<String, String> env) {
    this.file = file;
    this.source = source;
    this.env = env;
  }

  void error(Node at, String path, String value, String expected) {
    errors.add(new ConfigError(file, at == null ? 1 : at.getStartMark().getLine() + 1, path,
        value, expected));
  }

  /**
   * Reports a core builder's {@link InvalidValueException} at its field's line when
   * {@code owner} has that field (showing the value as written, {@code 500us} rather than
   * core's {@code PT0.0005S}), otherwise at {@code at}.
   */
  void coreError(Node at, String path, IllegalArgumentException e, Mapping owner) {
    if (!(e instanceof InvalidValueException invalid)) {
      error(at, path, String.valueOf(e.getMessage()), "a valid value");
      return;
    }
    String field = invalid.field();
    Node fieldNode = owner == null ? null : owner.node(field);
    if (fieldNode instanceof ScalarNode scalar) {
      error(fieldNode, owner.path(field), Values.quote(interpolate(scalar.getValue()).withEnv),
          invalid.expected());
    } else if (fieldNode != null) {
      error(fieldNode, owner.path(field), invalid.value(), invalid.expected());
    } else {
      error(at, path + (owner != null && owner.keys.contains(field) ? "." + field : ""),
          invalid.value(), invalid.expected());
    }
  }

  /** The scalar parsed with variables applied, or null after reporting an error. */
  <T> T scalar(Node node, String path, String expected, Parser<T> parser) {
    if (!(node instanceof ScalarNode s)) {
      error(node, path, Values.describe(node), expected);
      return null;
    }
    String raw = s.getValue();
    if (s.getTag().equals(Tag.NULL)) {
      error(node, path, "null", expected);
      return null;
    }
    Interpolation in = interpolate(raw);
    if (!in.missing.isEmpty()) {
      error(node, path, Values.quote(raw), "environment variable " + in.missing.get(0)
          + " to be set, or a default: ${" + in.missing.get(0) + ":-value}");
      return null;
    }
    try {
      return parser.parse(in.withEnv);
    } catch (IllegalArgumentException | ArithmeticException e) {
      String why = expectation(e, expected);
      if (!in.fromEnv.isEmpty()) {
        try {
          T fallback = parser.parse(in.withDefaults);
          for (String var : in.fromEnv) {
            if (!quiet.contains(var) && warned.add(var)) {
              warnings.add(var + "=" + Values.quote(env.apply(var)) + " is not valid for " + path
                  + " (expected: " + why + "); using the default " + in.withDefaults);
            }
          }
          return fallback;
        } catch (IllegalArgumentException | ArithmeticException e2) {
          error(node, path, Values.quote(in.withDefaults), expectation(e2, expected));
          return null;
        }
      }
      error(node, path, Values.quote(in.withEnv), why);
      return null;
    }
  }

  /**
   * What a parser said was expected: core's typed expectation, or the message of the loader's
   * own parsers, which is the expectation itself.
   */
  static String expectation(RuntimeException e, String fallback) {
    if (e instanceof InvalidValueException invalid) {
      return invalid.expected();
    }
    return e.getMessage() == null ? fallback : e.getMessage();
  }

  Interpolation interpolate(String raw) {
    return Interpolation.of(raw, env, referenced);
  }
}
