package dev.sluice.core.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Decision;
import dev.sluice.core.FakeTicker;
import dev.sluice.core.Identity;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The configurable JSON bodies of a 429 and of a fail-closed 503. */
class JsonTemplateTest {

  private static final String TEMPLATE = "{\"error\":\"too many requests\",\"retryAfter\":"
      + "{{retryAfter}},\"ms\":{{retryAfterMs}},\"limit\":{{limit}},\"left\":{{remaining}},"
      + "\"rule\":{{rule}},\"limitName\":{{limitName}}}";

  private static Decision refused(String ruleName) {
    Rule rule = Rule.builder(ruleName)
        .limit(Limit.tokenBucket("per-second", 2, 1, Duration.ofSeconds(3))).build();
    RateLimiter limiter = RateLimiter.of(Store.memory(new FakeTicker(), 100));
    Identity id = Identity.empty().with("ip", "192.0.2.1");
    limiter.check(List.of(rule), id, 1);
    limiter.check(List.of(rule), id, 1);
    return limiter.check(List.of(rule), id, 1);
  }

  @Test
  void placeholders_becomeJsonValues_stringsEscaped() {
    Decision d = refused("a\"b<c");
    ResponseSpec spec = ResponseSpec.newBuilder().jsonTemplate(TEMPLATE).build();
    assertThat(d.allowed()).isFalse();
    assertThat(spec.body(d, false)).isEqualTo("{\"error\":\"too many requests\",\"retryAfter\":3,"
        + "\"ms\":3000,\"limit\":2,\"left\":0,\"rule\":\"a\\\"b\\u003cc\","
        + "\"limitName\":\"per-second\"}");
    // The page is still chosen for browsers.
    assertThat(spec.body(d, true)).startsWith("<!doctype html>");
  }

  @Test
  void unavailableTemplate_namesNoRule() {
    Rule rule = Rule.builder("r").limit(Limit.fixedWindow("r", 1, Duration.ofSeconds(1)))
        .onStoreError(OnStoreError.DENY).build();
    Decision d = Decision.failed(List.of(rule));
    ResponseSpec spec = ResponseSpec.newBuilder()
        .unavailableJsonTemplate("{\"error\":\"down\",\"rule\":{{rule}},\"in\":{{retryAfter}}}")
        .build();
    assertThat(d.degraded()).isTrue();
    assertThat(spec.body(d, false)).isEqualTo("{\"error\":\"down\",\"rule\":null,\"in\":"
        + d.retryAfterSeconds() + "}");
  }

  @Test
  void noTemplate_isTheBuiltInBody() {
    Decision d = refused("r");
    assertThat(ResponseSpec.defaults().body(d, false)).isEqualTo(Bodies.refusalJson(d));
  }

  @Test
  void badTemplates_areRefusedWhereSet() {
    assertThatThrownBy(() -> ResponseSpec.newBuilder().jsonTemplate("{\"a\":{{nope}}}"))
        .isInstanceOf(InvalidValueException.class)
        .hasMessageContaining("jsonTemplate : {\"a\":{{nope}}}")
        .hasMessageContaining("{{nope}} is not one of");
    assertThatThrownBy(() -> ResponseSpec.newBuilder().jsonTemplate("{\"a\":1"))
        .isInstanceOf(InvalidValueException.class).hasMessageContaining("not one JSON object");
    assertThatThrownBy(() -> ResponseSpec.newBuilder().unavailableJsonTemplate("oops"))
        .isInstanceOf(InvalidValueException.class)
        .hasMessageContaining("unavailableJsonTemplate : oops");
  }
}
