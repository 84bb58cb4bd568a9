package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The in-memory store's reservations against a plain model of what they mean, on random
 * interleavings of reserving, settling (failure, success, nothing) and time passing: every
 * verdict is the model's, so at no moment do failures counted plus shares held pass the limit,
 * and a share never settled lapses after its ttl.
 */
class ReservationProperties {

  private static final long TTL = Duration.ofSeconds(1).toNanos();
  private static final long BAN = Duration.ofHours(1).toNanos();

  /** One step: 0..5 reserve (cost 1 + step % 2), 6..8 settle (failure, success, none), 9 wait. */
  @Provide
  Arbitrary<List<Integer>> steps() {
    return Arbitraries.integers().between(0, 9).list().ofMinSize(1).ofMaxSize(200);
  }

  @Property(tries = 300)
  void ruleOfLimits_agreesWithTheModel(@ForAll("steps") List<Integer> steps,
      @ForAll("limits") int limit, @ForAll boolean bans) {
    FakeTicker ticker = new FakeTicker(-Duration.ofDays(1).toNanos());
    Store store = Store.memory(ticker, 1000);
    Rule.Builder b = Rule.builder("login").countStatus(StatusSet.of(List.of(401)))
        .limit(Limit.slidingLog("login", limit, Duration.ofDays(7)));
    if (bans) {
      b.ban(Duration.ofNanos(BAN));
    }
    Rule rule = b.build();
    Identity who = Identity.ip("192.0.2.7");
    long spent = 0;
    long bannedUntil = -1;
    long now = 0;
    List<long[]> held = new ArrayList<>();   // id, cost, expiry
    int step = 0;
    for (int s : steps) {
      String at = "step " + step++ + " " + steps;
      long t = now;
      held.removeIf(h -> h[2] - t <= 0);
      if (s <= 5) {
        long cost = 1 + s % 2;
        long holding = held.stream().mapToLong(h -> h[1]).sum();
        Reservation r = store.reserveAsync(rule, who, cost, TTL).toCompletableFuture().join();
        if (bannedUntil > now) {
          assertThat(r.held()).as(at).isFalse();
          assertThat(r.verdict().banned()).as(at).isTrue();
        } else if (spent + cost > limit) {
          assertThat(r.held() || r.inFlight()).as(at).isFalse();
          assertThat(r.verdict().banApplied()).as(at).isEqualTo(bans);
          if (bans) {
            bannedUntil = now + BAN;
          }
        } else if (spent + holding + cost > limit) {
          assertThat(r.inFlight()).as(at).isTrue();
          assertThat(r.verdict().retryAfterNanos()).isEqualTo(Reservation.IN_FLIGHT_RETRY_NANOS);
        } else {
          assertThat(r.held()).as(at).isTrue();
          held.add(new long[] {r.id(), cost, now + TTL});
        }
      } else if (s <= 8 && !held.isEmpty()) {
        long[] h = held.remove(0);
        Reservation.Settlement how = Reservation.Settlement.values()[s - 6];
        Verdict v = store.settleAsync(rule, who, h[0], h[1], how).toCompletableFuture().join();
        if (how == Reservation.Settlement.FAILURE && bannedUntil > now) {
          assertThat(v.banned()).as(at).isTrue();    // a banned key counts nothing more
        } else if (how == Reservation.Settlement.FAILURE) {
          assertThat(v.allowed()).as(at).isTrue();   // a held share always fits
          spent += h[1];
        }
      } else if (s == 9) {
        long wait = Duration.ofMillis(300).toNanos();
        ticker.advanceNanos(wait);
        now += wait;
      }
      assertThat(spent + held.stream().mapToLong(h -> h[1]).sum()).as(at)
          .isLessThanOrEqualTo(limit);
    }
  }

  @Provide
  Arbitrary<Integer> limits() {
    return Arbitraries.integers().between(1, 6);
  }

  /**
   * A cooldown keyed by address: failures plus requests in flight never pass maxRetries, the
   * maxRetries-th failure locks, a success resets nothing (it proves nothing about the others
   * behind the address).
   */
  @Property(tries = 300)
  void addressCooldown_agreesWithTheModel(@ForAll("steps") List<Integer> steps,
      @ForAll("limits") int maxRetries) {
    FakeTicker ticker = new FakeTicker(Long.MAX_VALUE - Duration.ofDays(1).toNanos());
    Store store = Store.memory(ticker, 1000);
    Rule rule = Rule.builder("invites").countStatus(StatusSet.of(List.of(404)))
        .cooldown(maxRetries, Duration.ofDays(7), Duration.ofDays(1), Duration.ofDays(2)).build();
    Identity who = Identity.ip("192.0.2.7");
    long failures = 0;
    boolean locked = false;
    long now = 0;
    List<long[]> held = new ArrayList<>();
    int step = 0;
    for (int s : steps) {
      String at = "step " + step++ + " " + steps;
      long t = now;
      held.removeIf(h -> h[2] - t <= 0);
      if (s <= 5) {
        Reservation r = store.reserveAsync(rule, who, 1 + s % 2, TTL).toCompletableFuture()
            .join();
        if (locked) {
          assertThat(r.verdict().banned()).as(at).isTrue();
        } else if (failures + held.size() >= maxRetries) {
          assertThat(r.inFlight()).as(at).isTrue();
        } else {
          assertThat(r.held()).as(at).isTrue();
          held.add(new long[] {r.id(), 1, now + TTL});
        }
      } else if (s <= 8 && !held.isEmpty()) {
        long[] h = held.remove(0);
        Reservation.Settlement how = Reservation.Settlement.values()[s - 6];
        store.settleAsync(rule, who, h[0], 1, how).toCompletableFuture().join();
        if (how == Reservation.Settlement.FAILURE && !locked && ++failures == maxRetries) {
          locked = true;
        }
      } else if (s == 9) {
        long wait = Duration.ofMillis(300).toNanos();
        ticker.advanceNanos(wait);
        now += wait;
      }
      assertThat(failures + held.size()).as(at).isLessThanOrEqualTo(maxRetries);
    }
  }
}
