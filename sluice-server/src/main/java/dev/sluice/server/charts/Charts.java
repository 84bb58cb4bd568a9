package dev.sluice.server.charts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The chart module shared by the replay report and the console: {@code charts.js} (a global
 * {@code SluiceCharts} drawing inline SVG, written by the project, no library) and
 * {@code charts.css}, read from the jar once. The report inlines both into its one HTML file;
 * the console serves them as files, so its Content-Security-Policy needs no inline script.
 */
public final class Charts {

  private static final String SCRIPT = read("charts.js");
  private static final String CSS = read("charts.css");

  private Charts() {}

  /** The text of {@code charts.js}. */
  public static String script() {
    return SCRIPT;
  }

  /** The text of {@code charts.css}. */
  public static String css() {
    return CSS;
  }

  private static String read(String name) {
    try (InputStream in = Charts.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource dev/sluice/server/charts/" + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
