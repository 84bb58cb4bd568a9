package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.core.http.Cors;
import dev.sluice.core.http.ResponseSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * A refusal written from its template is, byte for byte, the refusal the slow way writes, for
 * any numbers and every kind of body; a template the renderer's answers cannot make is never
 * used.
 */
class RefusalTemplateTest {

  private static final Cors CORS = Cors.of(List.of("https://app.example"), null, null, null,
      false, null);
  private static final List<ResponseSpec> SPECS = List.of(
      ResponseSpec.defaults(),
      ResponseSpec.newBuilder().cors(CORS).ietfHeaders(false).build(),
      ResponseSpec.newBuilder().jsonTemplate("{\"slow\":{{retryAfter}},\"ms\":{{retryAfterMs}},"
          + "\"left\":{{remaining}},\"of\":{{limit}},\"by\":{{rule}},\"as\":{{limitName}}}").build(),
      ResponseSpec.newBuilder().htmlTemplate("<p>{{retryAfter}}s {{retryAfterMs}}ms "
          + "{{retryAfter}} again, rule {{rule}}</p>").build(),
      // A number printed against other digits: no template can stand for it.
      ResponseSpec.newBuilder().htmlTemplate("<p>wait 0{{retryAfter}}0 s</p>").build());

  /** A real refusal of the memory store's engine: the one token of "flood" is spent. */
  private static Decision refusal(String limitName) {
    RateLimiter limiter = RateLimiter.of(Store.memory(Ticker.system(), 1000));
    Rule rule = Rule.builder("flood").limit(Limit.tokenBucket(limitName, 1, 1, Duration.ofDays(1)))
        .build();
    limiter.check(List.of(rule), Identity.ip("192.0.2.1"), 1);
    Decision d = limiter.check(List.of(rule), Identity.ip("192.0.2.1"), 1);
    assertThat(d.allowed()).isFalse();
    return d;
  }

  private static String text(ByteBuf b) {
    try {
      return b.toString(StandardCharsets.UTF_8);
    } finally {
      b.release();
    }
  }

  private static String slow(Answers a, ResponseSpec spec, Decision d, boolean html,
      String origin, boolean keepAlive) {
    byte[][] r = a.render(spec, d, html, origin, "GET", keepAlive, null);
    return new String(r[0], StandardCharsets.UTF_8) + new String(r[1], StandardCharsets.UTF_8);
  }

  @Property(tries = 300)
  void templateAnswers_areTheSlowAnswers(@ForAll("specs") int spec,
      @ForAll @LongRange(min = -5, max = 10_000_000) long remaining,
      @ForAll @LongRange(min = 0, max = 400_000_000_000_000L) long resetNanos,
      @ForAll @LongRange(min = 1, max = 400_000_000_000_000L) long retryNanos,
      @ForAll boolean html, @ForAll boolean keepAlive, @ForAll boolean origin) {
    Answers a = new Answers();
    Decision d = refusal("flood").withNumbers(remaining, resetNanos, retryNanos);
    String from = origin ? "https://app.example" : null;
    String accept = html ? "text/html" : "application/json";
    String written = text(a.refusal(SPECS.get(spec), d, accept, from, "GET", keepAlive,
        UnpooledByteBufAllocator.DEFAULT));
    assertThat(written).isEqualTo(slow(a, SPECS.get(spec), d, html, from, keepAlive));
    assertThat(RefusalTemplate.compile(SPECS.get(spec), d, html, from, "GET", keepAlive, a)
        .usable()).as("written from a template").isEqualTo(spec != 4 || !html);
    assertThat(a.bodyBytes()).isEqualTo(written.length() - written.indexOf("\r\n\r\n") - 4);
  }

  @Provide
  Arbitrary<Integer> specs() {
    return Arbitraries.integers().between(0, SPECS.size() - 1);
  }

  @Test
  void templates_areMadeFromTheRenderer_andRefusedWhenItsTextHidesANumber() {
    Answers a = new Answers();
    Decision d = refusal("flood");
    assertThat(RefusalTemplate.compile(SPECS.get(0), d, false, null, "GET", true, a).usable())
        .isTrue();
    assertThat(RefusalTemplate.compile(SPECS.get(3), d, true, null, "GET", true, a).usable())
        .isTrue();
    assertThat(RefusalTemplate.compile(SPECS.get(4), d, true, null, "GET", true, a).usable())
        .isFalse();
    assertThat(RefusalTemplate.compile(SPECS.get(4), d, false, null, "GET", true, a).usable())
        .as("the same spec's JSON body").isTrue();
  }

  @Test
  void aTemplate_fitsItsShapeOnly() {
    Answers a = new Answers();
    Decision d = refusal("flood");
    RefusalTemplate t = RefusalTemplate.compile(SPECS.get(0), d, false, null, "GET", true, a);
    assertThat(t.fits(SPECS.get(0), d.withNumbers(3, 5, 7), false, null, "GET", true)).isTrue();
    assertThat(t.fits(SPECS.get(1), d, false, null, "GET", true)).isFalse();
    assertThat(t.fits(SPECS.get(0), d, true, null, "GET", true)).isFalse();
    assertThat(t.fits(SPECS.get(0), d, false, "https://app.example", "GET", true)).isFalse();
    assertThat(t.fits(SPECS.get(0), d, false, null, "GET", false)).isFalse();
    assertThat(t.fits(SPECS.get(0), refusal("other"), false, null, "GET", true)).isFalse();
  }
}
