package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sampler reads the counters the gateway keeps, as differences between two reads. */
class SamplerTest {

  final Metrics metrics = new Metrics((level, message, fields) -> {});
  final RateLimiter limiter = RateLimiter.of(Store.memory(() -> 0L, 1000));
  final Rule login = Rule.builder("login").limit(Limit.fixedWindow("login", 2,
      Duration.ofMinutes(1))).build();
  final List<String> rules = new ArrayList<>(List.of("login"));
  final Sampler sampler = new Sampler(metrics, () -> rules);

  void request() {
    metrics.decision("http", List.of(login), limiter.check(login, Identity.ip("192.0.2.1")), 0);
  }

  @Test
  void firstRead_isTheBaseline_thenEachReadGivesWhatWasCountedSince() {
    request();
    assertThat(sampler.sample()).as("counts before the first read are not this second's")
        .isEmpty();
    request();
    request();
    request();
    metrics.delayed("http", "login");
    assertThat(sampler.sample().get("login")).containsExactly(1, 2, 0, 0, 1);
    assertThat(sampler.sample().get("login")).containsExactly(0, 0, 0, 0, 0);
  }

  @Test
  void aRuleAReloadAdds_countsFromZero() {
    sampler.sample();
    Rule api = Rule.builder("api").limit(Limit.fixedWindow("api", 5, Duration.ofMinutes(1)))
        .build();
    metrics.registerRules(List.of("api"));
    rules.add("api");
    metrics.decision("http", List.of(api), limiter.check(api, Identity.ip("192.0.2.1")), 0);
    assertThat(sampler.sample().get("api")).containsExactly(1, 0, 0, 0, 0);
  }
}
