package dev.sluice.server.charts;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ChartsTest {

  @Test
  void script_isTheModule_readOnce() {
    assertThat(Charts.script()).contains("global.SluiceCharts")
        .contains("timeSeries: timeSeries").contains("histogram: histogram")
        .contains("bars: bars");
    assertThat(Charts.script()).isSameAs(Charts.script());
  }

  @Test
  void script_isCspFriendly_noEvalNoStyleAttributesNoNetwork() {
    String js = Charts.script();
    assertThat(js).doesNotContain("eval(").doesNotContain("new Function")
        .doesNotContain("innerHTML").doesNotContain("'style'").doesNotContain(".style.")
        .doesNotContain("fetch(").doesNotContain("XMLHttpRequest");
    // The one URL is SVG's namespace name, which is never fetched.
    assertThat(js.replace("'http://www.w3.org/2000/svg'", "")).doesNotContain("http");
  }

  @Test
  void css_stylesTheChartsClasses() {
    assertThat(Charts.css()).contains(".sluice-chart").contains(".sc-marker-label");
  }
}
