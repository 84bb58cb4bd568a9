package dev.sluice.policy;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The {@code logging:} section: the gateway's access log.
 *
 * @param access {@code OFF} (the default), {@code COMMON} (the Common Log Format, then Sluice's
 *     fields), {@code COMBINED} (common plus referer and user agent, as nginx's and Apache's
 *     {@code combined}, then Sluice's fields) or {@code JSON} (one object a line)
 * @param accessFile the file lines are appended to, or null for standard output ({@code -})
 */
public record LoggingSettings(Access access, Path accessFile) {

  /** The access log's format. */
  public enum Access { OFF, COMMON, COMBINED, JSON }

  public LoggingSettings {
    Objects.requireNonNull(access, "access");
  }

  public static LoggingSettings defaults() {
    return new LoggingSettings(Access.OFF, null);
  }
}
