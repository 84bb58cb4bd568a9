package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The console's rings: a timeline of seconds written by hand, read back as the page gets it. */
class TimelineTest {

  /** A second near the start of a minute, so a test's seconds stay in one minute. */
  static final long T = 1_800_000_000L / 60 * 60;

  final Timeline timeline = new Timeline();

  static Map<String, long[]> counts(String rule, long allowed, long refused) {
    Map<String, long[]> m = new LinkedHashMap<>();
    m.put(rule, new long[] {allowed, refused, 0, 0, 0});
    return m;
  }

  @SuppressWarnings("unchecked")
  static List<Integer> series(Map<String, Object> json, String rule, String outcome) {
    Map<String, Object> rules = (Map<String, Object>) json.get("rules");
    return (List<Integer>) ((Map<String, Object>) rules.get(rule)).get(outcome);
  }

  @Test
  void aSecond_isTheLastPointOfTheSecondsRing_andAddsToItsMinute() {
    timeline.add(T, counts("login", 7, 3));
    timeline.add(T + 1, counts("login", 5, 0));
    Map<String, Object> s = timeline.json(Timeline.Resolution.SECOND, T + 1);
    assertThat(s.get("start")).isEqualTo((T + 1 - 899) * 1000);
    assertThat(s.get("stepMs")).isEqualTo(1000L);
    List<Integer> allowed = series(s, "login", "allowed");
    assertThat(allowed).hasSize(900);
    assertThat(allowed.subList(898, 900)).containsExactly(7, 5);
    assertThat(series(s, "login", "refused").subList(898, 900)).containsExactly(3, 0);
    assertThat(allowed.subList(0, 898)).containsOnly(0);

    Map<String, Object> m = timeline.json(Timeline.Resolution.MINUTE, T + 1);
    assertThat(m.get("stepMs")).isEqualTo(60_000L);
    List<Integer> minutes = series(m, "login", "allowed");
    assertThat(minutes).hasSize(1440);
    assertThat(minutes.get(1439)).isEqualTo(12);
    assertThat(series(m, "login", "refused").get(1439)).isEqualTo(3);
  }

  @Test
  void missedSeconds_readZero_andAreNeverFilledFrom15MinutesEarlier() {
    timeline.add(T, counts("login", 4, 0));
    timeline.add(T + 3, counts("login", 9, 0));
    List<Integer> a = series(timeline.json(Timeline.Resolution.SECOND, T + 3), "login",
        "allowed");
    assertThat(a.subList(896, 900)).containsExactly(4, 0, 0, 9);
    // 900 s later the slot of T is reused; its old count must not show as T + 900's.
    timeline.add(T + 900, counts("login", 1, 0));
    List<Integer> later = series(timeline.json(Timeline.Resolution.SECOND, T + 900), "login",
        "allowed");
    assertThat(later.get(899)).isEqualTo(1);
    assertThat(later.get(896)).as("T + 897: never written").isZero();
    assertThat(timeline.at("login", "allowed", T)).as("T fell out of the ring").isZero();
    // Read a ring well after the last write: the old seconds are outside the window.
    assertThat(series(timeline.json(Timeline.Resolution.SECOND, T + 5000), "login", "allowed"))
        .containsOnly(0);
  }

  @Test
  void rulesThatCountNothing_takeNoMemory_andRulesPastTheCapCountAsOther() {
    timeline.add(T, counts("quiet", 0, 0));
    assertThat(timeline.rules()).isEmpty();
    Map<String, long[]> many = new LinkedHashMap<>();
    for (int i = 0; i < Timeline.MAX_RULES + 6; i++) {
      many.put("r" + i, new long[] {1, 0, 0, 0, 0});
    }
    timeline.add(T + 1, many);
    assertThat(timeline.rules()).hasSize(Timeline.MAX_RULES + 1).contains("r0", "r63")
        .doesNotContain("r64").contains(Timeline.OTHER);
    assertThat(timeline.at(Timeline.OTHER, "allowed", T + 1)).isEqualTo(6);
  }

  @Test
  void aRuleWithNothingLeftInEitherRing_isDropped() {
    timeline.add(T, counts("gone", 2, 2));
    timeline.add(T + 60, counts("kept", 1, 0));
    timeline.dropEmpty();
    assertThat(timeline.rules()).containsExactly("gone", "kept");
    timeline.add(T + 24 * 3600 + 30, Map.of());
    timeline.dropEmpty();
    assertThat(timeline.rules()).as("T's minute is 24 h old; T + 60's still shows")
        .containsExactly("kept");
  }

  @Test
  void aSlotSaturates_insteadOfWrapping() {
    timeline.add(T, counts("hot", Integer.MAX_VALUE - 1, 0));
    timeline.add(T + 1, counts("hot", 10, 0));
    List<Integer> m = series(timeline.json(Timeline.Resolution.MINUTE, T + 1), "hot",
        "allowed");
    assertThat(m.get(1439)).isEqualTo(Integer.MAX_VALUE);
  }
}
