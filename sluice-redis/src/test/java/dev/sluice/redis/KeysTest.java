package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

class KeysTest {

  @Test
  void coreKeys_areUsedVerbatim() {
    assertThat(LettuceStore.escape("chat:send:typing:u1:10.0.0.1"))
        .isEqualTo("chat:send:typing:u1:10.0.0.1");
  }

  @Test
  void braces_cannotChooseTheHashSlot() {
    String evil = LettuceStore.escape("x}{victim");
    assertThat(evil).isEqualTo("~x%7D%7Bvictim");
    String key = "sluice:{" + evil + "}";
    assertThat(SlotHash.getSlot(key)).isEqualTo(SlotHash.getSlot(evil));
  }

  @Test
  void escaping_isInjective() {
    assertThat(LettuceStore.escape("~a")).isNotEqualTo("~a");
    assertThat(LettuceStore.escape("a{b")).isNotEqualTo(LettuceStore.escape("a%7Bb"));
    assertThat(LettuceStore.escape("")).isEqualTo("~");
  }
}
