package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.Browser;
import dev.sluice.server.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTML report opened from disk in headless Chromium: no console error, no request for
 * anything (it is one file), every chart present with its text; the screenshot in
 * docs/REPLAY.md is taken here ({@code -Dsluice.screenshots=DIR} writes it to DIR).
 */
class ReplayReportBrowserIntegrationTests {

  @TempDir
  Path dir;

  @Test
  void report_opensFromDisk_withEveryChart_andNoConsoleError() throws Exception {
    Path log = Logs.write(dir, "access.log", ReplayTest.traffic().msec());
    Path looser = dir.resolve("looser.yaml");
    Files.writeString(looser, String.join("\n",
        "rules:",
        "  analysis: {limits: [{type: token-bucket, burst: 60, refill: 120, period: 1m}]}",
        "routes:",
        "  - {name: analysis, paths: [/api/analysis/**], rules: [analysis]}", ""));
    Path report = dir.resolve("report.html");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), Map.of(),
        new ByteArrayInputStream(new byte[0])).run(new String[] {"replay", "--format",
            Logs.MSEC_FORMAT, "--suggest", "1%", "--compare", looser.toString(), "--report",
            report.toString(), log.toString()});
    assertThat(code).isZero();
    String html = Files.readString(report);
    // The one URL is SVG's namespace name, never fetched.
    assertThat(html.replace("'http://www.w3.org/2000/svg'", "")).doesNotContain("http://").doesNotContain("https://")
        .doesNotContain("src=\"").contains("<script type=\"application/json\" id=\"replay-data\">");

    try (Browser b = Browser.start(1280, 900)) {
      b.open(report);
      // Three rules saw requests (analysis, read, backstop): a time series and a histogram
      // each; the refused clients' bars and timelines for both policies; the comparison's two.
      assertThat(b.findAll("section.rule")).hasSize(3);
      assertThat(b.findAll("section.rule svg.sluice-chart-timeseries")).hasSize(3);
      assertThat(b.findAll("section.rule svg.sluice-chart-histogram")).hasSize(3);
      assertThat(b.findAll("#refused-a svg.sluice-chart")).hasSize(2);
      assertThat(b.findAll("#compare svg.sluice-chart-bars")).hasSize(2);
      assertThat(b.findAll("svg.sluice-chart[role=img] > title")).allSatisfy(
          t -> assertThat(t.getAttribute("textContent")).isNotBlank());
      String analysis = b.find("#rule-a-analysis .sluice-chart-histogram desc").getAttribute("textContent");
      assertThat(analysis).contains("limit 15: 3 of 3 above").contains("suggested");
      assertThat(b.find("#refused-a table").getText())
          .contains("198.51.100.10").contains("shared address?");
      assertThat(b.find("#compare").getText()).contains("Refused by <embedded default> only: 1").contains("192.0.2.7");
      assertThat(b.script("return performance.getEntriesByType('resource').length"))
          .isEqualTo(0L);
      String shots = System.getProperty("sluice.screenshots");
      Path png = b.screenshot((shots == null ? dir : Path.of(shots)).resolve("replay-report.png"));
      assertThat(Files.size(png)).isGreaterThan(10_000);
    }
  }
}
