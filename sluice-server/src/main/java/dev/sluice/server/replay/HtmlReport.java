package dev.sluice.server.replay;

import dev.sluice.server.charts.Charts;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * {@code --report FILE}: one self-contained HTML file (the chart module, the page's script, its
 * styles and the replay's document all inlined), which opens from disk with no network access.
 */
final class HtmlReport {

  private static final String SCRIPT = read("report.js");
  private static final String CSS = read("report.css");

  private HtmlReport() {}

  static String render(Map<String, Object> model) {
    String title = "Sluice replay: " + model.get("policy")
        + (model.get("compare") == null ? "" : " and " + model.get("compare"));
    StringBuilder sb = new StringBuilder(64 * 1024);
    sb.append("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        // Nothing may be fetched: an empty icon, so a browser does not ask for favicon.ico.
        .append("<link rel=\"icon\" href=\"data:,\">\n")
        .append("<title>").append(escape(title)).append("</title>\n<style>\n")
        .append(Charts.css()).append('\n').append(CSS).append("</style>\n</head>\n<body>\n")
        .append("<header><h1>").append(escape(title)).append("</h1><p id=\"head\"></p>")
        .append("</header>\n<main id=\"report\"></main>\n")
        .append("<script type=\"application/json\" id=\"replay-data\">")
        // JsonOut escapes < > &, so no text in the data can end this element.
        .append(JsonOut.write(model, false)).append("</script>\n<script>\n")
        .append(Charts.script()).append("\n</script>\n<script>\n").append(SCRIPT)
        .append("\n</script>\n</body>\n</html>\n");
    return sb.toString();
  }

  static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("\"", "&quot;");
  }

  private static String read(String name) {
    try (InputStream in = HtmlReport.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
