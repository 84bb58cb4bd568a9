package dev.sluice.core;

/**
 * A setting given a value it does not accept. Carries the field, the value as shown and what was
 * expected, so a caller (a policy file loader adding the file and line) never parses the message,
 * which reads {@code "burst : -5 (expected: > 0)"}.
 */
public final class InvalidValueException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String field;
  private final String value;
  private final String expected;

  /**
   * @param field the setting's name, like {@code burst}
   * @param value the value as it should be shown, like {@code -5} or {@code "a b"}
   * @param expected what would have been accepted, like {@code > 0}
   */
  public InvalidValueException(String field, String value, String expected) {
    super(field + " : " + value + " (expected: " + expected + ")");
    this.field = field;
    this.value = value;
    this.expected = expected;
  }

  /** The setting's name. */
  public String field() {
    return field;
  }

  /** The rejected value, as shown in the message. */
  public String value() {
    return value;
  }

  /** What the setting accepts. */
  public String expected() {
    return expected;
  }
}
