package dev.sluice.policy;

/**
 * One problem in a policy file, with everything a person needs to fix it.
 *
 * @param file the file as given (or {@code <embedded default>})
 * @param line 1-based line of the offending node
 * @param path the field's path in the document, like {@code rules.analysis.limits[0].burst}
 * @param value the offending value as written (strings quoted), or a short description
 * @param expected what would have been accepted
 */
public record ConfigError(String file, int line, String path, String value, String expected) {

  /** {@code policy.yaml:12: rules.analysis.limits[0].burst : -5 (expected: > 0)}. */
  @Override
  public String toString() {
    return file + ":" + line + ": " + path + " : " + value + " (expected: " + expected + ")";
  }

  /** A value as the loader shows it in an error: {@code "lists/"}, {@code 40}, {@code true}. */
  public static String quote(String text) {
    return Values.quote(text);
  }
}
