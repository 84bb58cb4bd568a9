package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Verdict;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RefusalCacheTest {

  private static final Rule RULE = Rule.builder("r")
      .limit(Limit.fixedWindow("w", 5, Duration.ofSeconds(10))).build();
  private static final Rule SHADOW = RULE.toBuilder().mode(Mode.SHADOW).build();

  private final RefusalCache cache = new RefusalCache(2);

  @Test
  void refusal_isServedLocally_untilRetryAfter_thenForgotten() {
    record(RULE, "k", 3, Verdict.refused(0, 0, 4_000, 4_000, Double.NaN, false), 1_000);
    assertThat(cache.lookup(List.of(RULE), List.of("k"), 3, 2_000).get(0))
        .isEqualTo(Verdict.refused(0, 0, 3_000, 3_000, Double.NaN, false));
    assertThat(cache.lookup(List.of(RULE), List.of("k"), 3, 5_000)).isNull();
    assertThat(cache.size()).isZero();
  }

  @Test
  void smallerCost_orOtherRuleObject_asksRedis() {
    record(RULE, "k", 3, Verdict.refused(0, 0, 4_000, 4_000, Double.NaN, false), 0);
    assertThat(cache.lookup(List.of(RULE), List.of("k"), 2, 1)).isNull();
    Rule reloaded = RULE.toBuilder().build();
    assertThat(cache.lookup(List.of(reloaded), List.of("k"), 3, 1)).isNull();
  }

  @Test
  void bans_areServedAsBans() {
    record(RULE, "k", 1, Verdict.refused(0, 0, 9_000, 9_000, Double.NaN, true), 0);
    assertThat(cache.lookup(List.of(RULE), List.of("k"), 1, 4_000).get(0))
        .isEqualTo(Verdict.banned(5_000));
  }

  /** A solve on another instance resets a challenging rule's count: asked again within 1 s. */
  @Test
  void challengingRulesRefusal_isAskedAgainWithinASecond() {
    Rule challenging = RULE.toBuilder().action(Rule.Action.CHALLENGE).build();
    long minute = 60_000_000_000L;
    record(challenging, "k", 1, Verdict.refused(0, 0, minute, minute, Double.NaN, false), 0);
    assertThat(cache.lookup(List.of(challenging), List.of("k"), 1, 999_999_999L)).isNotNull();
    assertThat(cache.lookup(List.of(challenging), List.of("k"), 1, 1_000_000_000L)).isNull();
    record(RULE, "r", 1, Verdict.refused(0, 0, minute, minute, Double.NaN, false), 0);
    assertThat(cache.lookup(List.of(RULE), List.of("r"), 1, 30_000_000_000L))
        .as("a refusing rule's stays until its retry-after").isNotNull();
  }

  @Test
  void shadowRefusals_areNotCached() {
    record(SHADOW, "k", 1, Verdict.refused(0, 0, 9_000, 9_000, Double.NaN, false), 0);
    assertThat(cache.size()).isZero();
  }

  @Test
  void full_keepsItsEntries_untilTheyExpire() {
    Verdict v = Verdict.refused(0, 0, 1_000, 1_000, Double.NaN, false);
    record(RULE, "a", 1, v, 0);
    record(RULE, "b", 1, v, 0);
    record(RULE, "c", 1, v, 10);
    assertThat(cache.size()).isEqualTo(2);
    record(RULE, "c", 1, v, 2_000_000);
    assertThat(cache.size()).isEqualTo(1);
  }

  private void record(Rule rule, String key, long cost, Verdict v, long now) {
    cache.record(List.of(rule), List.of(key), cost, List.of(v), now);
  }
}
