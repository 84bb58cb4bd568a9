package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** sluice_moderation_checks_total: one series per surface and reason, none meaning allowed. */
class ModerationMetricsTest {

  @Test
  void checks_areCountedBySurfaceAndReason() {
    Metrics m = new Metrics((level, message, fields) -> { });
    m.moderated("username", "none");
    m.moderated("username", "blocked_term");
    m.moderated("username", "blocked_term");
    m.moderated("reaction", "not_in_palette");
    assertThat(m.moderationChecks("username", "blocked_term")).isEqualTo(2);
    assertThat(m.moderationChecks("room_name", "none")).isZero();
    assertThat(dev.sluice.server.Prom.canon(m.render())).contains("# TYPE sluice_moderation_checks_total counter\n",
        "sluice_moderation_checks_total{surface=\"reaction\",reason=\"not_in_palette\"} 1\n",
        "sluice_moderation_checks_total{surface=\"username\",reason=\"blocked_term\"} 2\n",
        "sluice_moderation_checks_total{surface=\"username\",reason=\"none\"} 1\n");
  }
}
