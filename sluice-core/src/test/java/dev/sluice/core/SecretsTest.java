package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SecretsTest {

  @Test
  void userAndPassword_keepsUser_masksPassword() {
    assertThat(Secrets.mask("redis://app:s3cret@10.0.0.7:6379/0"))
        .isEqualTo("redis://app:***@10.0.0.7:6379/0");
  }

  @Test
  void passwordOnly_forms_areMasked() {
    assertThat(Secrets.mask("redis://:s3cret@h:1")).isEqualTo("redis://:***@h:1");
    // Redis reads a userinfo without a colon as the password.
    assertThat(Secrets.mask("rediss://s3cret@h:1")).isEqualTo("rediss://***@h:1");
  }

  @Test
  void passwordWithAt_isMaskedWhole() {
    assertThat(Secrets.mask("redis://u:p@ss@w@h:1")).isEqualTo("redis://u:***@h:1");
  }

  @Test
  void uriInsideText_andSeveralUris_areAllMasked() {
    assertThat(Secrets.mask("cannot reach redis-cluster://u:a@h1:1,h2:2 (then "
        + "redis://:b@h3:3/x), \"rediss://c@h4\""))
        .isEqualTo("cannot reach redis-cluster://u:***@h1:1,h2:2 (then redis://:***@h3:3/x), "
            + "\"rediss://***@h4\"")
        .doesNotContain(":a@").doesNotContain(":b@").doesNotContain("c@");
  }

  @Test
  void textWithoutSecrets_isReturnedAsIs() {
    String plain = "GET http://example.com/a@b?x=1 memory redis://h:1 redis://@h redis://:@h";
    assertThat(Secrets.mask(plain)).isSameAs(plain);
    assertThat(Secrets.mask("redis://:***@h")).isEqualTo("redis://:***@h");
    assertThat(Secrets.mask(null)).isNull();
  }
}
