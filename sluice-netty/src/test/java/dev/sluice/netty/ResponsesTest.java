package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResponsesTest {

  @Test
  void browserAccept_prefersHtml() {
    assertThat(Responses.prefersHtml(List.of(
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"))).isTrue();
    assertThat(Responses.prefersHtml(List.of("text/*"))).isTrue();
  }

  @Test
  void apiClients_andTies_getJson() {
    assertThat(Responses.prefersHtml(List.of())).isFalse();
    assertThat(Responses.prefersHtml(List.of("*/*"))).isFalse();
    assertThat(Responses.prefersHtml(List.of("application/json"))).isFalse();
    assertThat(Responses.prefersHtml(List.of("application/json, text/html"))).isFalse();
    assertThat(Responses.prefersHtml(List.of("text/html;q=0.5, application/json"))).isFalse();
    assertThat(Responses.prefersHtml(List.of("text/html;q=garbage"))).isFalse();
  }

  /** A refusal for a request with this Accept used to throw instead of answering 429. */
  @Test
  void hostileAccept_isJson_notACrash() {
    assertThat(Responses.prefersHtml(List.of(";;;,,,/"))).isFalse();
    assertThat(Responses.prefersHtml(List.of(";"))).isFalse();
    assertThat(Responses.prefersHtml(List.of("text/html;" + ";".repeat(10_000)))).isTrue();
    assertThat(Responses.prefersHtml(List.of(",".repeat(100_000)))).isFalse();
  }

  @Test
  void jsonStrings_areEscaped() {
    assertThat(Responses.jsonString("a\"b\\c\n</script>")).isEqualTo(
        "\"a\\\"b\\\\c\\n\\u003c/script\\u003e\"");
  }

  @Test
  void htmlTemplate_valuesAreEscaped() {
    assertThat(Responses.html("<b>&\"'")).isEqualTo("&lt;b&gt;&amp;&quot;&#39;");
  }

  @Test
  void numbers_areWhole_whenWhole() {
    assertThat(Responses.number(10.0)).isEqualTo("10");
    assertThat(Responses.number(10.4)).isEqualTo("10.4");
    assertThat(Responses.number(Double.NaN)).isEqualTo("null");
  }
}
