package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** Each algorithm against a simple reference model, on random traces of (gap, cost). */
class AlgorithmProperties {

  record Step(long gapNanos, int cost) {}

  @Provide
  Arbitrary<List<Step>> traces() {
    Arbitrary<Long> gaps = Arbitraries.oneOf(
        Arbitraries.just(0L),
        Arbitraries.longs().between(1, 1_000_000_000L),
        Arbitraries.longs().between(1, 30_000_000_000L));
    Arbitrary<Integer> costs = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(8, Arbitraries.just(1)),
        net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, 4)));
    return Combinators.combine(gaps, costs).as(Step::new).list().ofMinSize(1).ofMaxSize(200);
  }

  private static Timeline timeline(long start) {
    return new Timeline(start, 1000);
  }

  @Property(tries = 300)
  void tokenBucket_admitsAtMostBurstPlusRateTimesElapsed(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 4, max = 50) int burst, @ForAll @IntRange(min = 1, max = 100) int rate,
      @ForAll @LongRange(min = Long.MIN_VALUE / 2, max = Long.MAX_VALUE / 2) long start) {
    Duration period = Duration.ofSeconds(10);
    Rule rule = Timeline.rule(Limit.tokenBucket("tb", burst, rate, period));
    Timeline t = timeline(start);
    long elapsed = 0;
    long admitted = 0;
    for (Step step : trace) {
      elapsed += step.gapNanos();
      t.atNanos(elapsed);
      int cost = Math.min(step.cost(), burst);
      if (t.check(rule, cost).allowed()) {
        admitted += cost;
      }
      double bound = burst + (double) rate * elapsed / period.toNanos();
      assertThat((double) admitted).isLessThanOrEqualTo(bound + 1e-9);
    }
  }

  /** Reference: the exact set of accepted hit times, pruned on every call. */
  @Property(tries = 300)
  void slidingLog_matchesTheReferenceAndNeverExceedsLInAnyWindow(
      @ForAll("traces") List<Step> trace, @ForAll @IntRange(min = 1, max = 12) int limit) {
    long window = Duration.ofSeconds(20).toNanos();
    Rule rule = Timeline.rule(Limit.slidingLog("log", limit, Duration.ofNanos(window)));
    Timeline t = timeline(0);
    ArrayDeque<Long> hits = new ArrayDeque<>();
    List<Long> accepted = new ArrayList<>();
    long now = 0;
    for (Step step : trace) {
      now += step.gapNanos();
      t.atNanos(now);
      int cost = Math.min(step.cost(), limit);
      while (!hits.isEmpty() && now - hits.peekFirst() >= window) {
        hits.pollFirst();
      }
      boolean expected = hits.size() + cost <= limit;
      Decision d = t.check(rule, cost);
      assertThat(d.allowed()).isEqualTo(expected);
      if (expected) {
        for (int i = 0; i < cost; i++) {
          hits.addLast(now);
          accepted.add(now);
        }
      } else {
        List<Long> live = new ArrayList<>(hits);
        long leaves = live.get(hits.size() + cost - limit - 1) + window;
        assertThat(d.retryAfterNanos()).isEqualTo(leaves - now);
      }
    }
    for (int i = 0; i + limit < accepted.size(); i++) {
      assertThat(accepted.get(i + limit) - accepted.get(i)).isGreaterThanOrEqualTo(window);
    }
  }

  /** Reference: seed 001's two-bucket formula in exact rational arithmetic. */
  @Property(tries = 300)
  void slidingWindow_matchesTheSeedFormula(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 1, max = 12) int limit) {
    long w = Duration.ofSeconds(20).toNanos();
    Rule rule = Timeline.rule(Limit.slidingWindow("sw", limit, Duration.ofNanos(w)));
    Timeline t = timeline(0);
    long bucket = Long.MIN_VALUE;
    long cur = 0;
    long prev = 0;
    long now = 0;
    for (Step step : trace) {
      now += step.gapNanos();
      t.atNanos(now);
      int cost = Math.min(step.cost(), limit);
      long b = Math.floorDiv(now, w);
      if (b != bucket) {
        prev = b == bucket + 1 ? cur : 0;
        cur = 0;
        bucket = b;
      }
      long e = now - b * w;
      // floor(estimate) = cur + floor((w - e) * prev / w)
      long floorEstimate = cur + java.math.BigInteger.valueOf(w - e)
          .multiply(java.math.BigInteger.valueOf(prev)).divide(java.math.BigInteger.valueOf(w))
          .longValue();
      boolean expected = floorEstimate + cost <= limit;
      Decision d = t.check(rule, cost);
      assertThat(d.allowed()).as("t=%d cur=%d prev=%d", now, cur, prev).isEqualTo(expected);
      if (expected) {
        cur += cost;
      }
    }
  }

  /** Reference: the seed's decaying score in exact millionths. */
  @Property(tries = 300)
  void score_matchesTheReference(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 1, max = 20) int maxScore,
      @ForAll @IntRange(min = 1, max = 10) int perActionTenths) {
    double perAction = Math.min(perActionTenths / 10.0, maxScore);
    long decay = Duration.ofMillis(1500).toNanos();
    Rule rule = Timeline.rule(Limit.score("s", maxScore, perAction, Duration.ofNanos(decay)));
    long capacity = rule.limits().get(0).capacity();
    Timeline t = timeline(0);
    long score = 0;
    long last = 0;
    long now = 0;
    long add = Math.round(perAction * 1_000_000);
    for (Step step : trace) {
      now += step.gapNanos();
      t.atNanos(now);
      long cost = Math.min(step.cost(), capacity);
      long elapsed = now - last;
      long decayed = Math.max(0, score - (long) Math.floor((double) elapsed * 1_000_000 / decay
          + 1e-9));
      if (score > 0 && elapsed * 1_000_000.0 / decay >= score) {
        decayed = 0;
      }
      boolean expected = decayed + add * cost <= maxScore * 1_000_000L;
      Decision d = t.check(rule, cost);
      assertThat(d.allowed()).isEqualTo(expected);
      if (expected) {
        score = decayed + add * cost;
        last = now;
      }
    }
  }

  /** For every algorithm: refused at now + retryAfter - 1 ns, allowed at now + retryAfter. */
  @Property(tries = 300)
  void retryAfter_isTheExactEarliestInstant(@ForAll("traces") List<Step> trace,
      @ForAll @IntRange(min = 0, max = 4) int kind) {
    Limit limit = switch (kind) {
      case 0 -> Limit.tokenBucket("l", 5, 3, Duration.ofSeconds(7));
      case 1 -> Limit.fixedWindow("l", 5, Duration.ofSeconds(7));
      case 2 -> Limit.slidingWindow("l", 5, Duration.ofSeconds(7));
      case 3 -> Limit.slidingLog("l", 5, Duration.ofSeconds(7));
      default -> Limit.score("l", 5, 0.5, Duration.ofSeconds(1));
    };
    Rule rule = Timeline.rule(limit);
    long now = 0;
    for (Step step : trace) {
      now += step.gapNanos();
      Timeline t = timeline(0);
      // Replay the trace prefix on a fresh store, then probe around the retry-after.
      long at = 0;
      for (Step s : trace) {
        at += s.gapNanos();
        if (at > now) {
          break;
        }
        t.atNanos(at);
        Decision d = t.check(rule, Math.min(s.cost(), 5));
        if (at == now && !d.allowed()) {
          long retry = d.retryAfterNanos();
          assertThat(retry).isPositive();
          t.atNanos(now + retry - 1);
          assertThat(t.check(rule, Math.min(s.cost(), 5)).allowed()).isFalse();
          t.atNanos(now + retry);
          assertThat(t.check(rule, Math.min(s.cost(), 5)).allowed()).isTrue();
          return;
        }
      }
    }
  }
}
