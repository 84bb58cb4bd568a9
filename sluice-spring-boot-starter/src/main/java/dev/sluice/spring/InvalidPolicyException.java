package dev.sluice.spring;

import dev.sluice.policy.ConfigException;

/** The configured policy could not be used; {@link PolicyFailureAnalyzer} reports it. */
public class InvalidPolicyException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String policy;

  InvalidPolicyException(String policy, ConfigException cause) {
    super("invalid Sluice policy " + policy + ": " + cause.getMessage(), cause);
    this.policy = policy;
  }

  /** The {@code sluice.policy} value. */
  public String policy() {
    return policy;
  }

  /** Every error, each with file, line, field, value and expectation. */
  public ConfigException errors() {
    return (ConfigException) getCause();
  }
}
