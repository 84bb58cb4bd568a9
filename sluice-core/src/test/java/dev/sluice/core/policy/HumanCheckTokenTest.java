package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A token read from a JSON body: one string value of the field, or none at all. */
class HumanCheckTokenTest {

  @Test
  void jsonField_isTheOneStringValue_nestedFieldsOfTheSameNameIgnored() {
    assertThat(HumanCheck.jsonField("{\"user\":{\"token\":\"inner\"},\"token\":\"t1\"}", "token"))
        .isEqualTo("t1");
    assertThat(HumanCheck.jsonField(" {\"token\" : \"a\\u0062c\"} ", "token")).isEqualTo("abc");
  }

  @Test
  void jsonField_isNone_whenTwice_notAString_missing_orTheBodyIsBad() {
    assertThat(HumanCheck.jsonField("{\"token\":\"a\",\"token\":\"b\"}", "token")).isNull();
    assertThat(HumanCheck.jsonField("{\"token\":1}", "token")).isNull();
    assertThat(HumanCheck.jsonField("{\"other\":\"a\"}", "token")).isNull();
    assertThat(HumanCheck.jsonField("{\"token\":\"a\"", "token")).as("truncated").isNull();
    assertThat(HumanCheck.jsonField("{\"token\":\"a\",}", "token")).isNull();
    assertThat(HumanCheck.jsonField("{\"token\":\"\"}", "token")).as("empty").isNull();
    assertThat(HumanCheck.jsonField("{\"token\":\"" + "x".repeat(HumanCheck.MAX_TOKEN_CHARS + 1)
        + "\"}", "token")).as("too long").isNull();
  }
}
