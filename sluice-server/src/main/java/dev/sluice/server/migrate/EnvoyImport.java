package dev.sluice.server.migrate;

import java.util.List;

/**
 * envoyproxy/ratelimit's configuration as a Sluice policy: its descriptors are Sluice's
 * {@code domains:} section, read with the same matching, units and fixed windows aligned to the
 * epoch, so the file is carried over whole; what Envoy sends stays in Envoy's route
 * configuration ({@code rate_limits} actions), pointed at {@code sluice serve --rls}.
 */
final class EnvoyImport {

  private EnvoyImport() {}

  static Draft translate(String text, String file) {
    Draft d = new Draft();
    d.header.add("Imported by `sluice import` from " + file + " (envoyproxy/ratelimit). Its "
        + "descriptors mean here what they meant there: the same matching, units and "
        + "epoch-aligned fixed windows, shadow_mode, replaces and unlimited.");
    d.header.add("Serve them to Envoy with `sluice serve --rls HOST:PORT` (or rls.listen): "
        + "Envoy's rate_limits actions send the same descriptors.");
    boolean first = true;
    for (String line : text.split("\n", -1)) {
      String t = line.stripTrailing();
      if (t.isBlank() || t.startsWith("---")) {
        continue;
      }
      d.domains.add((first ? "  - " : "    ") + t);
      first = false;
    }
    return d;
  }

  /** Whether the YAML documents look like one envoyproxy/ratelimit configuration. */
  static boolean looksLike(List<java.util.Map<String, Object>> docs) {
    return docs.size() == 1 && docs.get(0).containsKey("domain")
        && docs.get(0).containsKey("descriptors");
  }
}
