package dev.sluice.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonScanTest {

  /** The members {@link JsonScan#members} hands over, as key=value text, and its result. */
  private static List<String> walk(String json, int[] end) {
    List<String> seen = new ArrayList<>();
    end[0] = JsonScan.members(json, 8, (key, i) -> {
      int next = JsonScan.skipValue(json, i);
      seen.add(key + "=" + (next < 0 ? "?" : json.substring(i, next)));
      return next;
    });
    return seen;
  }

  @Test
  void members_handsOverEachTopLevelMember_inOrder_skippingNestedValues() {
    int[] end = new int[1];
    String json = " { \"a\" : 1, \"b\":{\"c\":[1,{\"d\":2}]}, \"a\":\"x\\\"y\" } ";
    assertThat(walk(json, end)).containsExactly("a=1", "b={\"c\":[1,{\"d\":2}]}", "a=\"x\\\"y\"");
    assertThat(end[0]).isEqualTo(json.lastIndexOf('}') + 1);
    assertThat(walk("{}", end)).isEmpty();
    assertThat(end[0]).isEqualTo(2);
  }

  @Test
  void members_keepsWhatCameBeforeDamage_andSaysTheInputIsBad() {
    int[] end = new int[1];
    assertThat(walk("{\"a\":1,\"b\":2", end)).containsExactly("a=1", "b=?");
    assertThat(end[0]).isEqualTo(-1);
    assertThat(walk("{\"a\":1 \"b\":2}", end)).containsExactly("a=1");
    assertThat(end[0]).isEqualTo(-1);
    for (String bad : List.of("", "[1]", "{", "{\"a\"}", "{\"a\":}", "{a:1}", "{\"a\":1,}")) {
      assertThat(JsonScan.members(bad, 8, (key, i) -> JsonScan.skipValue(bad, i)))
          .as(bad).isEqualTo(-1);
    }
  }

  @Test
  void members_cutsLongKeys_andStopsWhenTheMemberSaysSo() {
    int[] end = new int[1];
    assertThat(walk("{\"abcdefghijk\":1}", end)).containsExactly("abcdefgh=1");
    List<String> seen = new ArrayList<>();
    String json = "{\"a\":1,\"b\":2}";
    assertThat(JsonScan.members(json, 8, (key, i) -> {
      seen.add(key.toString());
      return -1;
    })).isEqualTo(-1);
    assertThat(seen).containsExactly("a");
  }
}
