package dev.sluice.policy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Locale;

/** The {@code logging:} section; see {@link LoggingSettings}. */
final class LoggingSection {

  private static final Field<LoggingSettings, LoggingSettings.Access> ACCESS = Field.of("access",
      "off, common, combined or json", text -> {
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
      }, LoggingSettings::access, a -> a.name().toLowerCase(Locale.ROOT));
  /** As written, or the resolved path when rendered; {@code -} for standard output. */
  private static final Field<LoggingSettings, String> ACCESS_FILE = Field.of("accessFile",
      "a file path, or - for standard output", text -> {
        if (text.isBlank()) {
          throw new IllegalArgumentException("a file path, or - for standard output");
        }
        Path.of(text.trim());
        return text.trim();
      }, l -> l.accessFile() == null ? "-" : l.accessFile().toString());
  private static final Fields<LoggingSettings> FIELDS = new Fields<>(ACCESS, ACCESS_FILE);

  static final List<String> KEYS = FIELDS.keys();

  private LoggingSection() {}

  static LoggingSettings read(Walk walk, Mapping doc) {
    Mapping m = doc.section("logging", KEYS, "a mapping with access:, accessFile:");
    if (m == null) {
      return LoggingSettings.defaults();
    }
    Fields<LoggingSettings>.Row r = FIELDS.read(m, LoggingSettings.defaults());
    LoggingSettings.Access access = r.get(ACCESS);
    String file = r.get(ACCESS_FILE);
    Path path = null;
    if (!file.equals("-")) {
      // Relative to the policy file, like moderation.lists.
      path = walk.source == null || walk.source.getParent() == null ? Path.of(file)
          : walk.source.getParent().resolve(file).normalize();
    }
    return new LoggingSettings(access, path);
  }

  /** The section as the effective policy shows it. */
  static Map<String, Object> render(LoggingSettings l) {
    return FIELDS.render(l);
  }
}
