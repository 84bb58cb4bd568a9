package dev.sluice.server.replay;

import java.util.List;

/** The {@code --format} values: names, {@code nginx:}/{@code envoy:}/{@code json:} specs, auto. */
final class Formats {

  static final String USAGE = "auto (the default), combined, common, json (Sluice's), envoy, "
      + "'nginx:LOG_FORMAT', 'envoy:FORMAT' or 'json:time=KEY,client=KEY,path=KEY,...'";

  private Formats() {}

  /** The format {@code spec} names, or null for {@code auto}; throws with what is expected. */
  static LineFormat of(String spec) {
    String s = spec.trim();
    return switch (s) {
      case "auto" -> null;
      case "combined" -> TemplateFormat.nginx("combined", TemplateFormat.COMBINED);
      case "common" -> TemplateFormat.nginx("common", TemplateFormat.COMMON);
      case "json", "sluice-json" -> JsonFormat.SLUICE;
      case "envoy" -> TemplateFormat.envoy("envoy", TemplateFormat.ENVOY);
      default -> {
        if (s.startsWith("nginx:")) {
          yield TemplateFormat.nginx("nginx", s.substring(6));
        }
        if (s.startsWith("envoy:")) {
          yield TemplateFormat.envoy("envoy", s.substring(6));
        }
        if (s.startsWith("json:")) {
          yield JsonFormat.mapped(s.substring(5));
        }
        throw new IllegalArgumentException("unknown format '" + s + "'");
      }
    };
  }

  /**
   * The format of a log whose first line is {@code line}: an object is Sluice's JSON, a line in
   * brackets Envoy's default, else combined (which a common line fails, so common is next).
   */
  static LineFormat detect(byte[] b, int s, int e) {
    List<LineFormat> candidates = List.of(JsonFormat.SLUICE,
        TemplateFormat.envoy("envoy", TemplateFormat.ENVOY),
        TemplateFormat.nginx("combined", TemplateFormat.COMBINED),
        TemplateFormat.nginx("common", TemplateFormat.COMMON));
    LogRecord r = new LogRecord();
    for (LineFormat f : candidates) {
      r.reset(b);
      if (f.parse(b, s, e, r)) {
        return f;
      }
    }
    return null;
  }
}
