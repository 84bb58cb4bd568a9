package dev.sluice.spring;

import dev.sluice.policy.ConfigError;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a bad policy into Spring Boot's start-up report: every error as
 * {@code file:line: field : value (expected: ...)}, and what to do.
 */
class PolicyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidPolicyException> {

  @Override
  protected FailureAnalysis analyze(Throwable root, InvalidPolicyException cause) {
    StringBuilder d = new StringBuilder("The Sluice policy ").append(cause.policy())
        .append(" is invalid (").append(cause.errors().errors().size()).append(" error")
        .append(cause.errors().errors().size() == 1 ? "" : "s").append("):");
    for (ConfigError e : cause.errors().errors()) {
      d.append(System.lineSeparator()).append("  ").append(e);
    }
    return new FailureAnalysis(d.toString(), "Fix the policy file (the format is the sluice "
        + "gateway's: docs/CONFIG.md), or point sluice.policy at another one.", cause);
  }
}
