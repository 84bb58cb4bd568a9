package dev.sluice.server.charts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.server.Browser;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The chart module in a real Chromium, served as the console serves it: under a strict
 * Content-Security-Policy (no inline script or style), so a chart that set a style attribute or
 * evaluated a string would be blocked and reported as a console error, failing the test.
 */
class ChartsBrowserIntegrationTests {

  private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; "
      + "img-src 'self'";

  private static final String PAGE = "<!doctype html><html lang=en><head><meta charset=utf-8>"
      + "<title>charts</title><link rel=stylesheet href=/charts.css>"
      + "<script src=/charts.js></script></head><body>"
      + "<div id=ts></div><div id=hist></div><div id=bars></div><div id=none></div>"
      + "<script src=/page.js></script></body></html>";

  private static final String PAGE_JS = String.join("\n",
      "var t0 = Date.UTC(2025, 5, 1, 12, 0, 0);",
      "function pts(f) { var p = []; for (var i = 0; i < 60; i++) p.push([t0 + i * 1000, f(i)]);"
          + " return p; }",
      "window.ts = SluiceCharts.timeSeries(document.getElementById('ts'), {utc: true,",
      "  yLabel: 'requests/s', stacked: true, series: [",
      "    {name: 'allowed', points: pts(function (i) { return 10; })},",
      "    {name: 'refused', points: pts(function (i) { return i > 30 ? 5 : 0; })}]});",
      "window.hist = SluiceCharts.histogram(document.getElementById('hist'), {logX: true,",
      "  logY: true, xLabel: 'peak requests per 30 s', yLabel: 'clients',",
      "  bins: [{from: 1, to: 2, count: 900}, {from: 2, to: 4, count: 80},",
      "         {from: 4, to: 8, count: 15}, {from: 8, to: 16, count: 4},",
      "         {from: 16, to: 32, count: 1}],",
      "  marker: {value: 15, label: 'analysis limit 15'}});",
      "window.bars = SluiceCharts.bars(document.getElementById('bars'), {xLabel: 'refused',",
      "  items: [{label: '203.0.113.7', value: 120}, {label: '198.51.100.2', value: 30}]});",
      "SluiceCharts.timeSeries(document.getElementById('none'), {series: []});");

  private static HttpServer server;
  private static String base;

  @BeforeAll
  static void serve() throws IOException {
    Map<String, String[]> files = Map.of(
        "/", new String[] {"text/html", PAGE},
        "/charts.js", new String[] {"text/javascript", Charts.script()},
        "/charts.css", new String[] {"text/css", Charts.css()},
        "/page.js", new String[] {"text/javascript", PAGE_JS},
        // A browser asks for it; a 404 would be a console error.
        "/favicon.ico", new String[] {"image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>"});
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", ex -> {
      String[] f = files.get(ex.getRequestURI().getPath());
      byte[] body = (f == null ? "not found" : f[1]).getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", (f == null ? "text/plain" : f[0])
          + "; charset=utf-8");
      ex.getResponseHeaders().set("Content-Security-Policy", CSP);
      ex.sendResponseHeaders(f == null ? 404 : 200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    base = "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterAll
  static void stop() {
    server.stop(0);
  }

  @Test
  void charts_drawAccessibleSvg_underAStrictCsp() {
    try (Browser b = Browser.start()) {
      b.open(base + "/");
      assertThat(b.findAll("svg.sluice-chart[role=img]")).hasSize(4);
      assertThat(b.find("#ts svg title").getAttribute("textContent"))
          .isEqualTo("requests/s over time: allowed, refused");
      assertThat(b.find("#ts svg desc").getAttribute("textContent"))
          .contains("Stacked").contains("2025-06-01 12:00:00Z").contains("refused peaks at 5");
      // Two stacked areas and their outlines; the x axis reads UTC clock times.
      assertThat(b.findAll("#ts path.sc-area")).hasSize(2);
      assertThat(b.findAll("#ts text.sc-tick").stream().map(e -> e.getText()).toList())
          .contains("12:00:00", "12:00:30");
      assertThat(b.findAll("#hist rect.sc-bin")).hasSize(5);
      assertThat(b.find("#hist .sc-marker-label").getText()).isEqualTo("analysis limit 15");
      assertThat(b.find("#hist svg desc").getAttribute("textContent"))
          .contains("with 1 of 1000 above it");
      assertThat(b.findAll("#bars text.sc-bar-label").stream().map(e -> e.getText()).toList())
          .containsExactly("203.0.113.7", "198.51.100.2");
      assertThat(b.find("#none .sc-empty").getText()).isEqualTo("no data");
      // No style attribute anywhere: a strict CSP would drop it.
      assertThat(b.script("return document.querySelectorAll('[style]').length")).isEqualTo(0L);
    }
  }

  @Test
  void update_redrawsIntoTheSameSvg() {
    try (Browser b = Browser.start()) {
      b.open(base + "/");
      Object before = b.script("return document.querySelector('#bars svg')");
      b.script("window.bars.update({items: [{label: 'a', value: 1}, {label: 'b', value: 2},"
          + " {label: 'c', value: 3}]})");
      assertThat(b.findAll("#bars svg")).hasSize(1);
      assertThat(b.script("return document.querySelector('#bars svg') === arguments[0]",
          before)).isEqualTo(true);
      assertThat(b.findAll("#bars text.sc-bar-label").stream().map(e -> e.getText()).toList())
          .containsExactly("a", "b", "c");
      b.script("window.hist.update({marker: {value: 3, label: 'limit 3'}})");
      assertThat(b.find("#hist .sc-marker-label").getText()).isEqualTo("limit 3");
      assertThat(b.findAll("#hist rect.sc-bin")).hasSize(5);
      b.script("window.ts.update({series: [{name: 'x', points: [[1, 2]]}]})");
      assertThat(b.findAll("#ts circle.sc-point")).hasSize(1);
    }
  }

  @Test
  void browser_failsOnConsoleErrors() {
    Browser b = Browser.start();
    b.open(base + "/");
    b.script("console.error('boom from the page')");
    b.script("setTimeout(function () { throw new Error('uncaught boom'); }, 0)");
    b.await(java.time.Duration.ofSeconds(5), "two errors reported",
        () -> b.consoleErrors().size() >= 2);
    assertThatThrownBy(b::close).isInstanceOf(AssertionError.class)
        .hasMessageContaining("boom from the page").hasMessageContaining("uncaught boom");
  }

  @Test
  void screenshot_writesAPng(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
    try (Browser b = Browser.start(800, 600)) {
      b.open(base + "/");
      Path png = b.screenshot(dir.resolve("charts.png"));
      byte[] head = java.util.Arrays.copyOf(java.nio.file.Files.readAllBytes(png), 8);
      assertThat(head).isEqualTo(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
    }
  }
}
