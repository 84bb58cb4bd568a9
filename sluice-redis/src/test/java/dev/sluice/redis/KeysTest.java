package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

class KeysTest {

  @Test
  void coreKeys_areUsedVerbatim() {
    assertThat(Keys.escape("chat:send:typing:u1:10.0.0.1"))
        .isEqualTo("chat:send:typing:u1:10.0.0.1");
  }

  @Test
  void braces_cannotChooseTheHashSlot() {
    String evil = Keys.escape("x}{victim");
    assertThat(evil).isEqualTo("~x%7D%7Bvictim");
    String key = "sluice:{" + evil + "}";
    assertThat(SlotHash.getSlot(key)).isEqualTo(SlotHash.getSlot(evil));
  }

  @Test
  void escaping_isInjective() {
    assertThat(Keys.escape("~a")).isNotEqualTo("~a");
    assertThat(Keys.escape("a{b")).isNotEqualTo(Keys.escape("a%7Bb"));
    assertThat(Keys.escape("")).isEqualTo("~");
  }
}
