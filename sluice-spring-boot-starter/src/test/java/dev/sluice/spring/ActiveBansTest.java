package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Which bans the endpoint lists: the running ones, the latest {@value ActiveBans#MAX}. */
class ActiveBansTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final Rule login = Rule.builder("login")
      .limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1))).ban(Duration.ofMinutes(10))
      .build();
  private final AtomicLong nanos = new AtomicLong();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(nanos::get, 10_000));

  /** A real ban decision from core: the second call of {@code address} starts it. */
  private Decision banOf(String address) {
    limiter.check(login, Identity.ip(address));
    Decision d = limiter.check(login, Identity.ip(address));
    assertThat(d.banApplied()).isTrue();
    return d;
  }

  private static Clock at(Duration since) {
    return Clock.fixed(T0.plus(since), ZoneOffset.UTC);
  }

  @Test
  void ban_isListedUntilItEnds_thenDropped() {
    Clock[] now = {at(Duration.ZERO)};
    ActiveBans bans = new ActiveBans(new Clock() {
      @Override
      public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return now[0].instant();
      }
    });
    bans.banApplied("http", banOf("192.0.2.1"), "192.0.2.1");
    assertThat(bans.active()).containsExactly(new ActiveBans.Ban("login", "192.0.2.1",
        T0.plus(Duration.ofMinutes(10))));
    now[0] = at(Duration.ofMinutes(10).minusNanos(1));
    assertThat(bans.active()).hasSize(1);
    now[0] = at(Duration.ofMinutes(10));
    assertThat(bans.active()).isEmpty();
  }

  @Test
  void pastTheCap_theOldestBanGoes() {
    ActiveBans bans = new ActiveBans(at(Duration.ZERO));
    Decision d = banOf("192.0.2.1");
    for (int i = 0; i <= ActiveBans.MAX; i++) {
      bans.banApplied("http", d, "10.0." + i / 256 + "." + i % 256);
    }
    assertThat(bans.active()).hasSize(ActiveBans.MAX);
    assertThat(bans.active().get(0).key()).isEqualTo("10.0.0.1");
    assertThat(bans.active().get(ActiveBans.MAX - 1).key())
        .isEqualTo("10.0." + ActiveBans.MAX / 256 + "." + ActiveBans.MAX % 256);
  }
}
