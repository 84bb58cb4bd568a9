package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The leaky bucket against a transcription of nginx's ngx_http_limit_req_lookup (one zone, one
 * key): allowed or not on every request, and on a refusal the exact wait, found by asking the
 * reference at every later millisecond.
 */
class LeakyBucketProperties {

  record Step(long gapNanos, int cost) {}

  /** nginx's node for one key; {@code exists == false} is a key it has not seen (or deleted). */
  static final class Nginx {
    final long rate;
    final long burst;
    boolean exists;
    long excess;
    long last;

    Nginx(long rate, long burst) {
      this.rate = rate;
      this.burst = burst;
    }

    Nginx copy() {
      Nginx n = new Nginx(rate, burst);
      n.exists = exists;
      n.excess = excess;
      n.last = last;
      return n;
    }

    boolean request(long now, int cost, boolean account) {
      if (exists) {
        long ms = now - last;
        // ngx_http_limit_req_expire: an idle node whose excess drained to zero is deleted.
        if (ms >= 60_000 && excess - rate * ms / 1000 <= 0) {
          exists = false;
        }
      }
      if (!exists) {
        long e = 1000L * (cost - 1);
        if (e > burst) {
          return false;
        }
        if (account) {
          exists = true;
          excess = e;
          last = now;
        }
        return true;
      }
      long ms = now - last;
      if (ms < 0) {
        ms = 0;
      }
      long e = excess - rate * ms / 1000 + 1000;
      if (e < 0) {
        e = 0;
      }
      // A cost of c is c requests in the same millisecond, all or none.
      e += 1000L * (cost - 1);
      if (e > burst) {
        return false;
      }
      if (account) {
        excess = e;
        if (ms != 0) {
          last = now;
        }
      }
      return true;
    }
  }

  @Provide
  Arbitrary<List<Step>> traces() {
    Arbitrary<Long> gaps = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(3, Arbitraries.just(0L)),
        net.jqwik.api.Tuple.of(4, Arbitraries.longs().between(1, 5_000_000L)),
        net.jqwik.api.Tuple.of(3, Arbitraries.longs().between(1, 2_000_000_000L)),
        net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(1, 90_000_000_000L)));
    Arbitrary<Integer> costs = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(9, Arbitraries.just(1)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, 3)));
    return Combinators.combine(gaps, costs).as(Step::new).list().ofMinSize(1).ofMaxSize(300);
  }

  @Property(tries = 400)
  void decidesAsNginx_andRetryAfterIsTheFirstMillisecondNginxWouldAccept(
      @ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 1, max = 120) int rate,
      @ForAll boolean perMinute,
      @ForAll @IntRange(min = 0, max = 12) int burst,
      @ForAll @LongRange(min = -5_000_000_000L, max = 5_000_000_000L) long start) {
    Duration period = perMinute ? Duration.ofMinutes(1) : Duration.ofSeconds(1);
    Limit limit = Limit.leakyBucket("req", rate, period, burst);
    Rule rule = Timeline.rule(limit);
    // The store's timeline starts at 0 whatever the ticker reads, as nginx's milliseconds do.
    Timeline t = new Timeline(start, 1000);
    Nginx nginx = new Nginx(rate * 1000L / (perMinute ? 60 : 1), burst * 1000L);
    long now = 0;
    for (Step step : trace) {
      now += step.gapNanos();
      t.atNanos(now);
      int cost = Math.min(step.cost(), burst + 1);
      long ms = Math.floorDiv(now, 1_000_000L);
      boolean expected = nginx.request(ms, cost, true);
      Decision d = t.check(rule, cost);
      assertThat(d.allowed()).as("at %d ms cost %d", ms, cost).isEqualTo(expected);
      if (!expected) {
        long wait = 1;
        while (!nginx.copy().request(ms + wait, cost, false)) {
          wait++;
        }
        long due = (ms + wait) * 1_000_000L;
        assertThat(d.retryAfterNanos()).as("retry-after at %d ms", ms).isEqualTo(due - now);
      }
    }
  }

  /** State reported fresh, replaced by a new key's, decides every later request the same. */
  @Property(tries = 300)
  void freshStateDecidesAsANewKey(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 1, max = 50) int rate, @ForAll boolean perMinute,
      @ForAll @IntRange(min = 0, max = 6) int burst) {
    Duration period = perMinute ? Duration.ofMinutes(1) : Duration.ofSeconds(1);
    Algorithm bucket = Limit.leakyBucket("req", rate, period, burst).algorithm();
    long[] kept = new long[2];
    long[] dropped = new long[2];
    bucket.init(kept, 0, 0);
    bucket.init(dropped, 0, 0);
    Algorithm.Probe a = new Algorithm.Probe();
    Algorithm.Probe b = new Algorithm.Probe();
    long now = 0;
    int fresh = 0;
    for (Step step : trace) {
      now += step.gapNanos();
      if (bucket.isFresh(dropped, 0, now)) {
        bucket.init(dropped, 0, now);
        fresh++;
      }
      int cost = Math.min(step.cost(), burst + 1);
      boolean allowedKept = bucket.test(kept, 0, now, cost, a);
      boolean allowedDropped = bucket.test(dropped, 0, now, cost, b);
      assertThat(allowedDropped).as("at %d ns", now).isEqualTo(allowedKept);
      assertThat(b.remaining).isEqualTo(a.remaining);
      assertThat(b.retryAfterNanos).isEqualTo(a.retryAfterNanos);
      if (allowedKept) {
        bucket.commit(kept, 0, now, cost);
        bucket.commit(dropped, 0, now, cost);
      }
    }
  }
}
