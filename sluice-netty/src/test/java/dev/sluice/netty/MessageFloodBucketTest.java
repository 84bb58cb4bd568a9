package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MessageFloodBucketTest {

  private static final long MS = 1_000_000L;

  @Test
  void burstOf120_then121stRefused_thenOneEvery25ms() {
    for (long start : new long[] {0, Long.MAX_VALUE - 10 * MS, -5 * MS, Long.MIN_VALUE}) {
      MessageFloodBucket b = new MessageFloodBucket(120, 40);
      for (int i = 0; i < 120; i++) {
        assertThat(b.tryAcquire(start)).as("message %d at start %d", i, start).isTrue();
      }
      assertThat(b.tryAcquire(start)).isFalse();
      assertThat(b.tryAcquire(start + 24 * MS)).isFalse();
      assertThat(b.tryAcquire(start + 25 * MS)).isTrue();
      assertThat(b.tryAcquire(start + 25 * MS)).isFalse();
    }
  }

  @Test
  void refusedMessage_consumesNothing() {
    MessageFloodBucket b = new MessageFloodBucket(1, 1);
    assertThat(b.tryAcquire(0)).isTrue();
    for (int i = 0; i < 100; i++) {
      assertThat(b.tryAcquire(500 * MS)).isFalse();
    }
    assertThat(b.tryAcquire(1000 * MS)).isTrue();
  }

  @Test
  void idleBucket_refillsToBurstOnly() {
    MessageFloodBucket b = new MessageFloodBucket(3, 10);
    assertThat(b.tryAcquire(0)).isTrue();
    long later = 3_600_000 * MS;
    assertThat(b.tryAcquire(later)).isTrue();
    assertThat(b.tryAcquire(later)).isTrue();
    assertThat(b.tryAcquire(later)).isTrue();
    assertThat(b.tryAcquire(later)).isFalse();
  }

  @Test
  void badSettings_nameTheField() {
    assertThatThrownBy(() -> new MessageFloodBucket(0, 40))
        .hasMessage("floodBurst : 0 (expected: > 0)");
    assertThatThrownBy(() -> new MessageFloodBucket(120, -1))
        .hasMessage("floodPerSecond : -1 (expected: > 0)");
  }
}
