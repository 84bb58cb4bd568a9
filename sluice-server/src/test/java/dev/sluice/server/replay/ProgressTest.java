package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProgressTest {

  @Test
  void line_showsLinesRateShareAndTimeLeft_whenTheSizeIsKnown() {
    // A quarter of 400 bytes in 10 s: 30 s left.
    assertThat(Progress.line(2_500_000, 100, 400, 10_000_000_000L)).isEqualTo(
        "2,500,000 lines  250,000 lines/s  [=====>                  ]  25%  ETA 0m30s");
  }

  @Test
  void line_withoutASize_isLinesAndRateOnly() {
    assertThat(Progress.line(1000, 0, -1, 2_000_000_000L)).isEqualTo("1,000 lines  500 lines/s");
  }
}
