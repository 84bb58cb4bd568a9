package dev.sluice.policy;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** The {@code logging:} section; see {@link LoggingSettings}. */
final class LoggingSection {

  static final List<String> KEYS = List.of("access", "accessFile");

  private LoggingSection() {}

  static LoggingSettings read(Walk walk, Mapping doc) {
    Mapping m = doc.section("logging", KEYS, "a mapping with access:, accessFile:");
    if (m == null) {
      return LoggingSettings.defaults();
    }
    LoggingSettings.Access access = m.get("access", "off, common, combined or json", text -> {
      switch (text.trim().toLowerCase(Locale.ROOT)) {
        case "off", "false" -> {
          return LoggingSettings.Access.OFF;
        }
        case "common" -> {
          return LoggingSettings.Access.COMMON;
        }
        case "combined" -> {
          return LoggingSettings.Access.COMBINED;
        }
        case "json" -> {
          return LoggingSettings.Access.JSON;
        }
        default -> throw new IllegalArgumentException("off, common, combined or json");
      }
    }, LoggingSettings.Access.OFF);
    String file = m.get("accessFile", "a file path, or - for standard output", text -> {
      if (text.isBlank()) {
        throw new IllegalArgumentException("a file path, or - for standard output");
      }
      Path.of(text.trim());
      return text.trim();
    }, "-");
    Path path = null;
    if (!file.equals("-")) {
      // Relative to the policy file, like moderation.lists.
      path = walk.source == null || walk.source.getParent() == null ? Path.of(file)
          : walk.source.getParent().resolve(file).normalize();
    }
    return new LoggingSettings(access, path);
  }
}
