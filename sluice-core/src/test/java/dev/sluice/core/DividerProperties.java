package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class DividerProperties {

  @Property(tries = 5000)
  void dividesLikeTheDivideInstruction(@ForAll @LongRange(min = 1) long divisor,
      @ForAll @LongRange(min = 0) long x) {
    assertThat(new Divider(divisor).divide(x)).isEqualTo(x / divisor);
  }

  @Property(tries = 2000)
  void smallDivisors_atTheEdges(@ForAll @LongRange(min = 1, max = 100_000) long divisor,
      @ForAll @LongRange(min = 0, max = 3) long k) {
    Divider d = new Divider(divisor);
    for (long x : new long[] {0, divisor - 1, divisor, divisor + 1, Long.MAX_VALUE,
        Long.MAX_VALUE - k, (Long.MAX_VALUE / divisor) * divisor - 1,
        (Long.MAX_VALUE / divisor) * divisor}) {
      if (x >= 0) {
        assertThat(d.divide(x)).as("%d / %d", x, divisor).isEqualTo(x / divisor);
      }
    }
  }

  @Test
  void tokenBucketIntervals_ofTheSeeds() {
    // seed 000: 240 per minute = 250 ms; 30 per minute = 2 s; the 1e9 per second bucket: 1 ns.
    for (long interval : new long[] {250_000_000L, 2_000_000_000L, 1, 3, 86_400_000_000_000L}) {
      Divider d = new Divider(interval);
      for (long x = 0; x < 1_000_000; x += 997) {
        assertThat(d.divide(x * 7919)).isEqualTo(x * 7919 / interval);
      }
    }
  }
}
