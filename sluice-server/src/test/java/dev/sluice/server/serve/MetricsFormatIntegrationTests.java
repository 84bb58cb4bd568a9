package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.server.NodeScripts;
import dev.sluice.server.admin.Metrics;
import dev.sluice.server.admin.StoreHealth;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server's {@code /metrics}, rendered by Micrometer's Prometheus registry, parsed by a real
 * Prometheus text parser (Node's {@code parse-prometheus-text-format}, whose sample parser is the
 * Prometheus Python client's): every family the hand-written renderer had is there, typed, with
 * its samples. The mapping to the old names is in docs/CONFIG.md.
 */
class MetricsFormatIntegrationTests {

  @Test
  void everySeriesOfTheOldRenderer_parsesAsPrometheusText() throws Exception {
    Metrics m = new Metrics((level, message, fields) -> { });
    m.store(StoreHealth.memory());
    m.trackedKeys(() -> 7);
    m.registerRules(List.of("analysis"));
    RateLimiter limiter = RateLimiter.of(Store.memory(() -> 0L, 10));
    Rule rule = Rule.builder("analysis")
        .limit(Limit.tokenBucket("analysis", 1, 30, Duration.ofMinutes(1)))
        .ban(Duration.ofSeconds(5)).build();
    for (int i = 0; i < 2; i++) {
      Decision d = limiter.check(rule, Identity.ip("192.0.2.1"));
      m.decision("http", List.of(rule), d, 0);
    }
    Rule shadow = Rule.builder("beta").mode(Mode.SHADOW)
        .limit(Limit.fixedWindow("beta", 1, Duration.ofMinutes(1))).build();
    for (int i = 0; i < 2; i++) {
      m.decision("http", List.of(shadow), limiter.check(shadow, Identity.ip("192.0.2.1")), 0);
    }
    m.webSocketOpened();
    m.webSocketClosed(1013);
    m.generated(429);
    m.reload(true);
    m.moderated("username", "none");
    m.decisionFailed("http", List.of(), new IllegalStateException("bug"));

    Map<String, Family> families = parse(m.render());
    assertThat(families.keySet()).contains("sluice_decisions_total",
        "sluice_shadow_refusals_total", "sluice_decision_errors_total", "sluice_bans_total", "sluice_store_errors_total",
        "sluice_tracked_keys", "sluice_websocket_connections", "sluice_websocket_closes_total",
        "sluice_generated_responses_total", "sluice_reloads_total", "sluice_store_ready",
        "sluice_store_connected", "sluice_store_connect_failures_total", "sluice_store_circuit",
        "sluice_store_circuit_opened_total", "sluice_moderation_checks_total",
        "sluice_decision_latency_seconds");
    assertThat(families.get("sluice_decisions_total").type).isEqualTo("COUNTER");
    assertThat(families.get("sluice_decisions_total").value("outcome=allowed,rule=analysis"))
        .isEqualTo(1);
    assertThat(families.get("sluice_decisions_total").value("outcome=refused,rule=analysis"))
        .isEqualTo(1);
    assertThat(families.get("sluice_bans_total").value("rule=analysis")).isEqualTo(1);
    assertThat(families.get("sluice_shadow_refusals_total").value("rule=beta")).isEqualTo(1);
    assertThat(families.get("sluice_decision_errors_total").value("rule=_none")).isEqualTo(1);
    assertThat(families.get("sluice_tracked_keys").type).isEqualTo("GAUGE");
    assertThat(families.get("sluice_tracked_keys").value("")).isEqualTo(7);
    assertThat(families.get("sluice_websocket_closes_total").value("code=1013")).isEqualTo(1);
    assertThat(families.get("sluice_generated_responses_total").value("status=429")).isEqualTo(1);
    assertThat(families.get("sluice_reloads_total").value("result=ok")).isEqualTo(1);
    assertThat(families.get("sluice_store_circuit").value("state=closed")).isEqualTo(1);
    assertThat(families.get("sluice_moderation_checks_total")
        .value("reason=none,surface=username")).isEqualTo(1);
    assertThat(families.get("sluice_decision_latency_seconds").type).isEqualTo("HISTOGRAM");
  }

  /** One parsed family: its type and samples by their labels, sorted and joined. */
  record Family(String type, Map<String, Double> samples) {
    double value(String labels) {
      assertThat(samples).containsKey(labels);
      return samples.get(labels);
    }
  }

  private static Map<String, Family> parse(String text) throws Exception {
    NodeScripts.install();
    Process p = new ProcessBuilder("node", "parse-metrics.mjs")
        .directory(NodeScripts.DIR.toFile()).redirectErrorStream(true).start();
    p.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String json = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(json).isZero();
    Map<String, Family> out = new TreeMap<>();
    // The parser's JSON is flat: families of {name, help, type, metrics: [{value, labels}]}.
    Matcher f = Pattern.compile("\\{\"name\":\"([^\"]+)\",\"help\":\"(?:[^\"\\\\]|\\\\.)*\","
        + "\"type\":\"([A-Z]+)\",\"metrics\":\\[(.*?)\\]}(?=,\\{\"name\"|\\]$)").matcher(json);
    while (f.find()) {
      Map<String, Double> samples = new TreeMap<>();
      Matcher s = Pattern.compile("\\{\"value\":\"([^\"]+)\"(?:,\"labels\":\\{([^}]*)})?")
          .matcher(f.group(3));
      while (s.find()) {
        List<String> labels = new ArrayList<>();
        if (s.group(2) != null) {
          for (String kv : s.group(2).split(",")) {
            String[] parts = kv.split(":", 2);
            labels.add(parts[0].replace("\"", "") + "=" + parts[1].replace("\"", ""));
          }
        }
        labels.sort(null);
        samples.put(String.join(",", labels), Double.parseDouble(s.group(1)));
      }
      out.put(f.group(1), new Family(f.group(2), samples));
    }
    return out;
  }
}
