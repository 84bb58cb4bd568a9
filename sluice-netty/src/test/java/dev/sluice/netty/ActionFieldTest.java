package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ActionFieldTest {

  @Test
  void readsTopLevelStringField() {
    assertThat(ActionField.read("{\"type\":\"SEND_REACTION\",\"emoji\":\"x\"}", "type"))
        .isEqualTo("SEND_REACTION");
    assertThat(ActionField.read(" { \"a\" : 1 , \"type\" : \"JOIN\" } ", "type")).isEqualTo("JOIN");
  }

  @Test
  void skipsNestedValues_withTheSameName() {
    assertThat(ActionField.read(
        "{\"data\":{\"type\":\"inner\",\"l\":[1,{\"type\":\"x\"},\"]}\"]},\"type\":\"outer\"}", "type"))
        .isEqualTo("outer");
  }

  @Test
  void decodesEscapes() {
    assertThat(ActionField.read("{\"type\":\"A\\u0042\\\"C\"}", "type")).isEqualTo("AB\"C");
    assertThat(ActionField.read("{\"ty\\u0070e\":\"k\"}", "type")).isEqualTo("k");
  }

  @Test
  void missingOrWrongType_isNull() {
    assertThat(ActionField.read("{\"kind\":\"x\"}", "type")).isNull();
    assertThat(ActionField.read("{\"type\":5}", "type")).isNull();
    assertThat(ActionField.read("[\"type\",\"x\"]", "type")).isNull();
    assertThat(ActionField.read("not json", "type")).isNull();
    assertThat(ActionField.read("", "type")).isNull();
  }

  @Test
  void truncatedInput_isNull_unlessTheFieldWasComplete() {
    assertThat(ActionField.read("{\"type\":\"JOIN\",\"payload\":\"aaaa", "type")).isEqualTo("JOIN");
    assertThat(ActionField.read("{\"payload\":\"aaaa\",\"type\":\"JO", "type")).isNull();
    assertThat(ActionField.read("{\"payload\":{\"a\":[[[[", "type")).isNull();
  }

  @Test
  void longValues_areCut() {
    String value = "x".repeat(1000);
    assertThat(ActionField.read("{\"type\":\"" + value + "\"}", "type"))
        .hasSize(ActionField.MAX_VALUE_CHARS);
  }

  @Test
  void deepNesting_isLinear_andSafe() {
    String deep = "{\"d\":" + "[".repeat(100_000) + "]".repeat(100_000) + ",\"type\":\"ok\"}";
    assertThat(ActionField.read(deep, "type")).isEqualTo("ok");
  }
}
