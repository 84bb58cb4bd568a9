package dev.sluice.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Accept negotiation, the JSON escaper and the page escaper every adapter answers with. */
class BodiesTest {

  @Test
  void browserAccept_prefersHtml() {
    assertThat(Accept.prefersHtml(List.of(
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"))).isTrue();
    assertThat(Accept.prefersHtml(List.of("text/*"))).isTrue();
  }

  @Test
  void apiClients_andTies_getJson() {
    assertThat(Accept.prefersHtml(List.of())).isFalse();
    assertThat(Accept.prefersHtml(List.of("*/*"))).isFalse();
    assertThat(Accept.prefersHtml(List.of("application/json"))).isFalse();
    assertThat(Accept.prefersHtml(List.of("application/json, text/html"))).isFalse();
    assertThat(Accept.prefersHtml(List.of("text/html;q=0.5, application/json"))).isFalse();
    assertThat(Accept.prefersHtml(List.of("text/html;q=garbage"))).isFalse();
  }

  /** A refusal for a request with this Accept used to throw instead of answering 429. */
  @Test
  void hostileAccept_isJson_notACrash() {
    assertThat(Accept.prefersHtml(List.of(";;;,,,/"))).isFalse();
    assertThat(Accept.prefersHtml(List.of(";"))).isFalse();
    assertThat(Accept.prefersHtml(List.of("text/html;" + ";".repeat(10_000)))).isTrue();
    assertThat(Accept.prefersHtml(List.of(",".repeat(100_000)))).isFalse();
  }

  @Test
  void jsonStrings_areEscaped() {
    assertThat(Json.quote("a\"b\\c\n</script>")).isEqualTo(
        "\"a\\\"b\\\\c\\n\\u003c/script\\u003e\"");
  }

  @Test
  void jsonDocuments_keepAnglesAndAmpersands_butNotLineSeparators() {
    assertThat(Json.quote(new StringBuilder(), "<embedded default> & \u2028", false).toString())
        .isEqualTo("\"<embedded default> & \\u2028\"");
  }

  @Test
  void htmlTemplate_valuesAreEscaped() {
    assertThat(Bodies.html("<b>&\"'")).isEqualTo("&lt;b&gt;&amp;&quot;&#39;");
  }

  @Test
  void numbers_areWhole_whenWhole() {
    assertThat(Json.number(10.0)).isEqualTo("10");
    assertThat(Json.number(10.4)).isEqualTo("10.4");
    assertThat(Json.number(Double.NaN)).isEqualTo("null");
  }
}
