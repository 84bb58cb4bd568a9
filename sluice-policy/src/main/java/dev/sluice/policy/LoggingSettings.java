package dev.sluice.policy;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The {@code logging:} section: the gateway's access log.
 *
 * @param access {@code OFF} (the default), {@code COMMON} (one text line a request) or
 *     {@code JSON} (one object a line)
 * @param accessFile the file lines are appended to, or null for standard output ({@code -})
 */
public record LoggingSettings(Access access, Path accessFile) {

  /** The access log's format. */
  public enum Access { OFF, COMMON, JSON }

  public LoggingSettings {
    Objects.requireNonNull(access, "access");
  }

  public static LoggingSettings defaults() {
    return new LoggingSettings(Access.OFF, null);
  }
}
