package dev.sluice.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One scalar with {@code ${NAME}} and {@code ${NAME:-default}} applied (an unset or empty
 * variable takes the default), both ways: with the environment, and with the defaults only, so
 * a variable whose value makes the field invalid can fall back to the default with a warning.
 */
final class Interpolation {

  private static final Pattern VARIABLE =
      Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

  /** The text with the environment's values (defaults where unset). */
  final String withEnv;
  /** The text with every variable's default, as if the environment were empty. */
  final String withDefaults;
  /** Variables whose values the environment supplied. */
  final List<String> fromEnv;
  /** Variables unset and without a default: an error. */
  final List<String> missing;

  private Interpolation(String withEnv, String withDefaults, List<String> fromEnv,
      List<String> missing) {
    this.withEnv = withEnv;
    this.withDefaults = withDefaults;
    this.fromEnv = fromEnv;
    this.missing = missing;
  }

  /** Applies {@code env} to {@code raw}, adding each variable named to {@code referenced}. */
  static Interpolation of(String raw, Function<String, String> env, Set<String> referenced) {
    List<String> fromEnv = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    Matcher m = VARIABLE.matcher(raw);
    StringBuilder withEnv = new StringBuilder();
    StringBuilder withDefaults = new StringBuilder();
    int last = 0;
    while (m.find()) {
      String var = m.group(1);
      String dflt = m.group(2);
      referenced.add(var);
      String value = env.apply(var);
      withEnv.append(raw, last, m.start());
      withDefaults.append(raw, last, m.start());
      if (value == null || value.isEmpty()) {
        if (dflt == null) {
          missing.add(var);
          dflt = "";
        }
        withEnv.append(dflt);
      } else {
        withEnv.append(value);
        fromEnv.add(var);
      }
      withDefaults.append(dflt == null ? "" : dflt);
      last = m.end();
    }
    withEnv.append(raw.substring(last));
    withDefaults.append(raw.substring(last));
    return new Interpolation(withEnv.toString(), withDefaults.toString(), fromEnv, missing);
  }
}
