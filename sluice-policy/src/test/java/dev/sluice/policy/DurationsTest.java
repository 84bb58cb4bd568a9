package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

  @Test
  void parsesEveryUnit() {
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("60s")).isEqualTo(Duration.ofSeconds(60));
    assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(Durations.parse("10m")).isEqualTo(Duration.ofMinutes(10));
    assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(Durations.parse("1d")).isEqualTo(Duration.ofDays(1));
    assertThat(Durations.parse("250us")).isEqualTo(Duration.ofNanos(250_000));
    assertThat(Durations.parse("0s")).isZero();
  }

  @Test
  void bareNumber_isNotADuration() {
    assertThatThrownBy(() -> Durations.parse("60")).hasMessage(Durations.EXPECTED);
    assertThatThrownBy(() -> Durations.parse("s")).hasMessage(Durations.EXPECTED);
    assertThatThrownBy(() -> Durations.parse("1.5.2s")).hasMessage(Durations.EXPECTED);
    assertThatThrownBy(() -> Durations.parse("-1s")).hasMessageContaining(">= 0");
    assertThatThrownBy(() -> Durations.parse("4000d")).hasMessageContaining("<= 3653d");
    assertThatThrownBy(() -> Durations.parse("0.5ns")).hasMessageContaining("whole number");
  }

  @Test
  void formatsShortest() {
    assertThat(Durations.format(Duration.ofSeconds(60))).isEqualTo("1m");
    assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
  }

  @Test
  void sizes() {
    assertThat(Durations.parseSize("65536")).isEqualTo(65536);
    assertThat(Durations.parseSize("64KiB")).isEqualTo(65536);
    assertThat(Durations.parseSize("1MiB")).isEqualTo(1 << 20);
    assertThat(Durations.formatSize(128 * 1024)).isEqualTo("128KiB");
    assertThatThrownBy(() -> Durations.parseSize("1MB")).hasMessage(Durations.SIZE_EXPECTED);
  }
}
