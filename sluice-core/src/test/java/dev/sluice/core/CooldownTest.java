package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Seed 003's invite brute-force protection: 8 failures per 5 minutes, escalating cooldowns. */
class CooldownTest {

  private static final Cooldown INVITES = Cooldown.builder("invite")
      .maxRetries(8)
      .retryWindow(Duration.ofMinutes(5))
      .cooldown(Duration.ofMinutes(1))
      .maxCooldown(Duration.ofMinutes(3))
      .build();
  private static final Identity WHO = Identity.ip("198.51.100.7");

  private final FakeTicker ticker = new FakeTicker();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1000));

  private Decision fail() {
    return limiter.cooldown(INVITES, WHO, Cooldown.Event.FAILURE);
  }

  private void failTimes(int n) {
    for (int i = 0; i < n; i++) {
      fail();
    }
  }

  @Test
  void eighthFailure_locks_andTheLockDoublesUpToTheMaximum() {
    failTimes(7);
    assertThat(limiter.cooldown(INVITES, WHO, Cooldown.Event.CHECK).remaining()).isEqualTo(1);
    Decision eighth = fail();
    assertThat(eighth.allowed()).isFalse();
    assertThat(eighth.banApplied()).isTrue();
    assertThat(eighth.retryAfter()).isEqualTo(Duration.ofMinutes(1));

    ticker.advance(Duration.ofMinutes(1));
    failTimes(7);
    assertThat(fail().retryAfter()).isEqualTo(Duration.ofMinutes(2));
    ticker.advance(Duration.ofMinutes(2));
    failTimes(7);
    assertThat(fail().retryAfter()).isEqualTo(Duration.ofMinutes(3));
    ticker.advance(Duration.ofMinutes(3));
    failTimes(7);
    assertThat(fail().retryAfter()).as("capped").isEqualTo(Duration.ofMinutes(3));
  }

  @Test
  void attemptsWhileLocked_areRefused_andDoNotExtendTheLock() {
    failTimes(8);
    ticker.advance(Duration.ofSeconds(30));
    Decision during = fail();
    assertThat(during.allowed()).isFalse();
    assertThat(during.banApplied()).isFalse();
    assertThat(during.retryAfter()).isEqualTo(Duration.ofSeconds(30));
    assertThat(limiter.cooldown(INVITES, WHO, Cooldown.Event.CHECK).allowed()).isFalse();
  }

  @Test
  void success_resetsTheKey() {
    failTimes(7);
    limiter.cooldown(INVITES, WHO, Cooldown.Event.SUCCESS);
    failTimes(7);
    assertThat(limiter.cooldown(INVITES, WHO, Cooldown.Event.CHECK).allowed()).isTrue();
    assertThat(fail().retryAfter()).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void failuresOutsideTheWindow_doNotAddUp() {
    failTimes(7);
    ticker.advance(Duration.ofMinutes(5));
    failTimes(7);
    assertThat(limiter.cooldown(INVITES, WHO, Cooldown.Event.CHECK).allowed()).isTrue();
  }

  @Test
  void escalationIsForgotten_afterMaxCooldownOfQuiet() {
    failTimes(8);
    ticker.advance(Duration.ofMinutes(1).plus(Duration.ofMinutes(3)));
    failTimes(7);
    assertThat(fail().retryAfter()).isEqualTo(Duration.ofMinutes(1));
  }
}
