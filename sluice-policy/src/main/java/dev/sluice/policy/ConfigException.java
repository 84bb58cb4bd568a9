package dev.sluice.policy;

import java.util.List;

/** A policy that cannot be used, with every error found (not just the first). */
public final class ConfigException extends Exception {

  private static final long serialVersionUID = 1L;

  private final transient List<ConfigError> errors;
  private final transient List<String> warnings;

  public ConfigException(List<ConfigError> errors, List<String> warnings) {
    super(render(errors));
    this.errors = List.copyOf(errors);
    this.warnings = List.copyOf(warnings);
  }

  public List<ConfigError> errors() {
    return errors;
  }

  /** Warnings seen while loading (environment fallbacks), for the log. */
  public List<String> warnings() {
    return warnings;
  }

  private static String render(List<ConfigError> errors) {
    StringBuilder sb = new StringBuilder();
    sb.append(errors.size()).append(errors.size() == 1 ? " error" : " errors");
    for (ConfigError e : errors) {
      sb.append(System.lineSeparator()).append("  ").append(e);
    }
    return sb.toString();
  }
}
