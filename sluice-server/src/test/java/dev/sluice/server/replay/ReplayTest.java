package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.policy.Policy;
import dev.sluice.policy.PolicyLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Known traffic through the default policy (seed 000), every count worked out by hand below.
 * The analysis bucket holds 15 tokens and gets one back every T = 2 s; as a GCRA it admits a
 * request at t when its full time TAT (t0 + 2 s per admitted request while it runs ahead of the
 * clock) satisfies TAT + 2 - t <= 30 s.
 */
class ReplayTest {

  @TempDir
  Path dir;

  private static final String SCHOOL = "198.51.100.10";
  private static final String SCRAPER = "203.0.113.66";
  private static final String BURST = "192.0.2.7";

  /**
   * The school: 40 pupils behind one NAT address, each with its own browser, each asking
   * /api/analysis every 10 s for a minute, pupil i at i * 0.25 s: one request every 0.25 s,
   * j = 0..239 at t = 0.25 j. While all are admitted TAT = 2(j + 1), so j is admitted while
   * 2j + 2 - 0.25j <= 30, j <= 16: 17 admitted, the first refusal is j = 17 at t = 4.25 s. Then
   * one token every 2 s = every 8th request: j = 24, 32, ..., 232, 27 more. 44 admitted, 196
   * refused.
   *
   * <p>The scraper: 20 requests a second for 10 s from t = 5 s, j = 0..199 at 5 + 0.05j, a new
   * X-Forwarded-For on each (ignored: the default policy trusts no proxy). Admitted while
   * 2j + 2 - 0.05j <= 30, j <= 14: 15, first refusal j = 15 at 5.75 s; then every 40th: j = 40,
   * 80, 120, 160: 19 admitted, 181 refused.
   *
   * <p>The burst: 20 requests in a second at t = 30 s, j at 30 + 0.05j: 15 admitted, 5 refused
   * from 30.75 s.
   *
   * <p>Ten readers at one request a second on /records/x (the read bucket: 120 burst, 4 a
   * second) are never refused.
   */
  static Logs traffic() {
    Logs logs = new Logs();
    for (int k = 0; k < 6; k++) {
      for (int i = 0; i < 40; i++) {
        logs.add(k * 10_000_000L + i * 250_000L, SCHOOL, "/api/analysis/lesson",
            "Mozilla/5.0 (pupil " + i + ")", null);
      }
    }
    for (int j = 0; j < 200; j++) {
      logs.add(5_000_000L + j * 50_000L, SCRAPER, "/api/analysis/page/" + j, "scrapy/2.11",
          "10.9." + (j / 250) + "." + (j % 250));
    }
    for (int j = 0; j < 20; j++) {
      logs.add(30_000_000L + j * 50_000L, BURST, "/api/analysis/x", "curl/8.5.0", null);
    }
    for (int r = 1; r <= 10; r++) {
      for (int s = 0; s < 60; s++) {
        logs.add(s * 1_000_000L + r * 1000L, "203.0.113." + r, "/records/x", "reader " + r,
            null);
      }
    }
    return logs;
  }

  static Replay.Result replay(Path log, String format, int threads) throws Exception {
    Policy policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    return new Replay(new Replay.Options(policy, null, List.of(log.toString()),
        Formats.of(format), threads, 1_000_000, 1_000_000, false), System.in, null).run();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> rule(Map<String, Object> model, String name) {
    Map<String, Object> a = (Map<String, Object>) model.get("a");
    return ((List<Map<String, Object>>) a.get("rules")).stream()
        .filter(r -> r.get("name").equals(name)).findFirst().orElseThrow();
  }

  @Test
  @SuppressWarnings("unchecked")
  void knownTraffic_refusedSet_firstRefusals_andCounts_asWorkedOutByHand() throws Exception {
    Path log = Logs.write(dir, "access.log", traffic().msec());
    Replay.Result r = replay(log, Logs.MSEC_FORMAT, 1);
    Policy policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    Map<String, Object> m = ReplayReport.model(r, policy, "default", null, null, Double.NaN, 10);

    assertThat(r.lines()).isEqualTo(240 + 200 + 20 + 600);
    assertThat(r.problems().count()).isZero();
    Map<String, Object> analysis = rule(m, "analysis");
    assertThat(analysis.get("requests")).isEqualTo(460L);
    assertThat(analysis.get("refused")).isEqualTo(196L + 181 + 5);
    assertThat((Map<String, Object>) analysis.get("firstRefusal")).containsEntry("time",
        "2025-06-01T12:00:04.250Z").containsEntry("client", SCHOOL);
    Map<String, Object> read = rule(m, "read");
    assertThat(read.get("requests")).isEqualTo(600L);
    assertThat(read.get("refused")).isEqualTo(0L);
    assertThat(rule(m, "backstop").get("requests")).isEqualTo(1060L);

    Map<String, Object> a = (Map<String, Object>) m.get("a");
    List<Map<String, Object>> top = (List<Map<String, Object>>) a.get("topRefused");
    assertThat(top).extracting(c -> c.get("client")).containsExactly(SCHOOL, SCRAPER, BURST);
    assertThat(top).extracting(c -> c.get("refused")).containsExactly(196L, 181L, 5L);
    assertThat(top).extracting(c -> c.get("firstRefusal")).containsExactly(
        "2025-06-01T12:00:04.250Z", "2025-06-01T12:00:05.750Z", "2025-06-01T12:00:30.750Z");
    // Requests counted up to the last refusal: the school's last is j = 239 (t = 59.75 s).
    assertThat(top.get(0).get("requests")).isEqualTo(240L);
    // 40 browsers behind the school's address; one for the scraper, whatever its XFF says.
    assertThat((int) top.get(0).get("userAgents")).isBetween(30, 55);
    assertThat(top.get(0).get("shared")).isEqualTo(true);
    assertThat(top.get(1).get("userAgents")).isEqualTo(1);
    assertThat((List<String>) a.get("shared")).containsExactly(SCHOOL);
    assertThat(a.get("refused")).isEqualTo(382L);
    assertThat(a.get("allowed")).isEqualTo(1060L - 382);
  }

  /** Two partitions by client decide exactly as one: every rule of seed 000 is keyed by ip. */
  @Test
  @SuppressWarnings("unchecked")
  void twoThreads_partitionedByClient_countTheSame() throws Exception {
    Path log = Logs.write(dir, "access.log", traffic().msec());
    Policy policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    Map<String, Object> one = ReplayReport.model(replay(log, Logs.MSEC_FORMAT, 1), policy, "d",
        null, null, 0.1, 10);
    Map<String, Object> two = ReplayReport.model(replay(log, Logs.MSEC_FORMAT, 2), policy, "d",
        null, null, 0.1, 10);
    for (String rule : List.of("analysis", "read", "backstop")) {
      Map<String, Object> a = rule(one, rule);
      Map<String, Object> b = rule(two, rule);
      for (String k : List.of("requests", "refused", "firstRefusal", "clients", "suggestion")) {
        assertThat(b.get(k)).as(rule + " " + k).isEqualTo(a.get(k));
      }
    }
    assertThat(JsonOut.write(((Map<String, Object>) two.get("a")).get("topRefused"), false))
        .isEqualTo(JsonOut.write(((Map<String, Object>) one.get("a")).get("topRefused"), false));
  }

  /**
   * Peaks and --suggest: client i (1..100) makes i requests inside one 30 s window of the
   * analysis rule (aligned to the epoch, so nothing carries over), so its peak is exactly i.
   * With 10% the suggestion is the smallest limit with at most 10 clients above it: 90. The
   * current limit, 15, has 85 clients above it (16..100).
   */
  @Test
  void suggest_isTheSmallestLimitRefusingAtMostTheShare() throws Exception {
    Logs logs = new Logs();
    for (int i = 1; i <= 100; i++) {
      for (int k = 0; k < i; k++) {
        logs.add(k * 250_000L + i, "10.1.0." + i, "/api/analysis/x", "ua", null);
      }
    }
    Path log = Logs.write(dir, "a.log", logs.msec());
    Policy policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    Map<String, Object> m = ReplayReport.model(replay(log, Logs.MSEC_FORMAT, 1), policy, "d",
        null, null, 0.10, 10);
    Map<String, Object> analysis = rule(m, "analysis");
    assertThat(analysis.get("clients")).isEqualTo(100L);
    assertThat(analysis.get("clientsAboveLimit")).isEqualTo(85L);
    @SuppressWarnings("unchecked")
    Map<String, Object> s = (Map<String, Object>) analysis.get("suggestion");
    assertThat(s).containsEntry("capacity", 90L).containsEntry("clientsAbove", 10L)
        .containsEntry("text", "90 per 30s (burst 90, refill 90 per 30s)");
    PeakHistogram h = new PeakHistogram();
    for (int i = 1; i <= 100; i++) {
      h.add(i);
    }
    assertThat(h.limitFor(0.001)).isEqualTo(100);
    assertThat(h.limitFor(0.5)).isEqualTo(50);
  }

  /** Whole-second combined lines: the same refusals as far as seconds tell them apart. */
  @Test
  void combined_readsNginxsDefault_andDetectsIt() throws Exception {
    Logs logs = new Logs();
    for (int j = 0; j < 20; j++) {
      logs.add(0, "192.0.2.9", "/api/analysis/x", "curl", null);
    }
    Path log = Logs.write(dir, "c.log", logs.combined());
    Replay.Result r = replay(log, "auto", 1);
    assertThat(r.inputs().get(0).format()).isEqualTo("combined");
    assertThat(r.a().refused[r.a().rules.indexOf("analysis")]).isEqualTo(5);
  }

  @Test
  void listener_hearsEachDecision_withRuleAndRoute() throws Exception {
    Logs logs = new Logs();
    for (int j = 0; j < 16; j++) {
      logs.add(j, "192.0.2.9", "/api/analysis/x", "curl", null);
    }
    logs.add(100, "192.0.2.9", "/healthz", "lb", null);
    Path log = Logs.write(dir, "l.log", logs.msec());
    Policy policy = PolicyLoader.loadDefault(Map.of()).config().policy();
    List<String> heard = new ArrayList<>();
    new Replay(new Replay.Options(policy, null, List.of(log.toString()),
        Formats.of(Logs.MSEC_FORMAT), 1, 1000, 1000, false), System.in,
        (rec, outcome, rule, route) -> heard.add(rec.line + " " + outcome + " " + rule + " "
            + route)).run();
    assertThat(heard).hasSize(17);
    assertThat(heard.get(0)).isEqualTo("1 allowed analysis analysis");
    assertThat(heard.get(15)).isEqualTo("16 refused analysis analysis");
    assertThat(heard.get(16)).isEqualTo("17 exempt null healthz");
  }
}
