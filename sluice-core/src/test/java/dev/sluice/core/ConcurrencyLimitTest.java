package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Seed 001's concurrent socket caps. */
class ConcurrencyLimitTest {

  private static final ConcurrencyLimit PER_IP =
      ConcurrencyLimit.of("ws-ip", "ip", 55, Duration.ofMinutes(2), OnStoreError.ALLOW);
  private static final Identity SCHOOL = Identity.ip("203.0.113.40");

  private final FakeTicker ticker = new FakeTicker();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(ticker, 1000));

  @Test
  void classroomOf40PlusHost_fits_the56thIsRefused() {
    List<Lease> held = new ArrayList<>();
    for (int i = 0; i < 55; i++) {
      Optional<Lease> lease = limiter.acquire(PER_IP, SCHOOL);
      assertThat(lease).isPresent();
      held.add(lease.get());
    }
    assertThat(limiter.acquire(PER_IP, SCHOOL)).isEmpty();
    assertThat(limiter.acquire(PER_IP, Identity.ip("203.0.113.41"))).isPresent();
    held.get(0).close();
    assertThat(limiter.acquire(PER_IP, SCHOOL)).isPresent();
  }

  @Test
  void release_isIdempotent() {
    ConcurrencyLimit two = ConcurrencyLimit.of("two", "ip", 2, Duration.ofMinutes(1),
        OnStoreError.ALLOW);
    Lease a = limiter.acquire(two, SCHOOL).orElseThrow();
    Lease b = limiter.acquire(two, SCHOOL).orElseThrow();
    a.close();
    a.close();
    a.close();
    assertThat(limiter.store().leases(two.keyFor(SCHOOL))).isEqualTo(1);
    Lease c = limiter.acquire(two, SCHOOL).orElseThrow();
    assertThat(limiter.acquire(two, SCHOOL)).isEmpty();
    b.close();
    c.close();
    assertThat(limiter.store().leases(two.keyFor(SCHOOL))).isZero();
  }

  @Test
  void crashedHolder_leaseExpires_renewedLeaseDoesNot() {
    ConcurrencyLimit one = ConcurrencyLimit.of("one", "ip", 1, Duration.ofSeconds(30),
        OnStoreError.ALLOW);
    Lease crashed = limiter.acquire(one, SCHOOL).orElseThrow();
    Lease alive = limiter.acquire(one, Identity.ip("192.0.2.2")).orElseThrow();
    ticker.advance(Duration.ofSeconds(20));
    assertThat(alive.renew()).isTrue();
    ticker.advance(Duration.ofSeconds(20));
    assertThat(limiter.acquire(one, SCHOOL)).as("the crashed holder's slot came back").isPresent();
    assertThat(limiter.acquire(one, Identity.ip("192.0.2.2"))).isEmpty();
    assertThat(crashed.renew()).isFalse();
  }
}
