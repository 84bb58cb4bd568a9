package dev.sluice.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LimitHeadersTest {

  /** Issue 7: rule names are RFC 8941 sf-strings in the IETF fields, quote and backslash escaped. */
  @Test
  void ruleNameWithQuoteAndBackslash_isAnEscapedSfString() {
    RateLimiter limiter = RateLimiter.of(Store.memory(() -> 0L, 10));
    Rule rule = Rule.builder("say \"hi\" \\ now")
        .limit(Limit.fixedWindow("say \"hi\" \\ now", 5, Duration.ofSeconds(10))).build();
    Decision d = limiter.check(rule, Identity.ip("192.0.2.1"));
    Map<String, String> h = new LinkedHashMap<>();
    LimitHeaders.write(d, true, true, h::put);
    assertThat(h.get("RateLimit-Policy")).isEqualTo("\"say \\\"hi\\\" \\\\ now\";q=5;w=10");
    assertThat(h.get("RateLimit")).isEqualTo("\"say \\\"hi\\\" \\\\ now\";r=4;t=10");
  }
}
