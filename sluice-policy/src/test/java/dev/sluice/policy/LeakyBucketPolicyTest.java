package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The leaky-bucket limit (nginx's limit_req) in policy files: read, checked, rendered back. */
class LeakyBucketPolicyTest {

  private static final String POLICY = String.join("\n",
      "rules:",
      "  login:",
      "    limits:",
      "      - {type: leaky-bucket, rate: 30, period: 1m, burst: 5}",
      "  api:",
      "    limits:",
      "      - {type: leaky-bucket, rate: 10}",
      "");

  @Test
  void readsRatePeriodAndBurst_withNginxsDefaults() throws Exception {
    LoadedPolicy p = PolicyLoaderTest.parse(POLICY, Map.of());
    Limit login = p.config().policy().rules().get("login").limits().get(0);
    assertThat(login.kind()).isEqualTo(Limit.Kind.LEAKY_BUCKET);
    assertThat(login.capacity()).isEqualTo(6);
    assertThat(login.refill()).isEqualTo(30);
    Limit api = p.config().policy().rules().get("api").limits().get(0);
    assertThat(api.capacity()).as("burst 0 by default, as nginx's").isEqualTo(1);
    assertThat(api.period().toSeconds()).isEqualTo(1);
  }

  @Test
  void rendersAsWritten_andLoadsBack() throws Exception {
    LoadedPolicy p = PolicyLoaderTest.parse(POLICY, Map.of());
    String yaml = PolicyFormat.toYaml(EffectivePolicy.render(p.config()));
    assertThat(yaml).contains("type: leaky-bucket", "rate: 30", "period: 1m", "burst: 5");
    LoadedPolicy again = PolicyLoaderTest.parse(yaml, Map.of());
    assertThat(again.config().policy().rules().get("login").limits().get(0).capacity())
        .isEqualTo(6);
  }

  @Test
  void badValues_nameFileLineAndField() {
    List<String> errors = PolicyLoaderTest.errors(String.join("\n",
        "rules:",
        "  a:",
        "    limits:",
        "      - {type: leaky-bucket, rate: 10, period: 1500ms}",
        "  b:",
        "    limits:",
        "      - {type: leaky-bucket, burst: -1}",
        ""));
    assertThat(errors).hasSize(3);
    assertThat(errors.get(0)).isEqualTo("p.yaml:4: rules.a.limits[0].period : \"1500ms\" "
        + "(expected: a whole number of seconds, like 1s or 1m)");
    assertThat(errors.get(1)).startsWith("p.yaml:7: rules.b.limits[0].rate : missing");
    assertThat(errors.get(2)).startsWith("p.yaml:7: rules.b.limits[0].burst : -1");
  }
}
