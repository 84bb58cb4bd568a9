package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A policy file is plain values: a servlet or Spring user reading one gets neither the
 * moderation library (and ICU4J) nor the Redis store (and Lettuce). Fails when sluice-policy
 * depends on them again, directly or through another module.
 */
class ModuleBoundaryTest {

  @ParameterizedTest
  @ValueSource(strings = {"dev.sluice.moderation.Moderator", "com.ibm.icu.lang.UCharacter",
      "dev.sluice.redis.RedisStore", "io.lettuce.core.RedisClient"})
  void isNotOnTheClasspath(String className) {
    assertThatThrownBy(() -> Class.forName(className, false, getClass().getClassLoader()))
        .isInstanceOf(ClassNotFoundException.class);
  }
}
