package dev.sluice.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Accept negotiation, read in place, against the obvious split-and-parse reading. */
class AcceptTest {

  @Test
  void browsersGetHtml_clientsJson_tiesJson() {
    assertThat(Accept.prefersHtml("text/html,application/xhtml+xml,*/*;q=0.8")).isTrue();
    assertThat(Accept.prefersHtml("*/*")).isFalse();
    assertThat(Accept.prefersHtml("application/json")).isFalse();
    assertThat(Accept.prefersHtml("text/html;q=0.5, application/json;q=0.9")).isFalse();
    assertThat(Accept.prefersHtml("application/json;q=0.5, TEXT/HTML")).isTrue();
    assertThat(Accept.prefersHtml("text/*;q=0.9, */*;q=0.1")).isTrue();
    assertThat(Accept.prefersHtml((String) null)).isFalse();
    assertThat(Accept.prefersHtml("garbage")).isFalse();
  }

  @Provide
  Arbitrary<String> headers() {
    Arbitrary<String> media = Arbitraries.of("text/html", "TEXT/HTML", "text/*", "*/*",
        "application/json", "application/*", "image/png", "text/plain", "*/html", "", "text/",
        "/html");
    Arbitrary<String> q = Arbitraries.of("", ";q=0", ";q=1", ";q=0.5", ";q=0.80", ";q=1.000",
        "; q=0.3", ";Q=0.9", ";q=0.123", ";level=1", ";q=0.9;level=2");
    Arbitrary<String> range = Arbitraries.strings().withChars(" \t").ofMaxLength(2)
        .flatMap(ws -> media.flatMap(m -> q.map(p -> ws + m + p)));
    return range.list().ofMinSize(1).ofMaxSize(6).map(l -> String.join(",", l));
  }

  @Property(tries = 500)
  void agreesWithTheSplittingReading(@ForAll("headers") String header) {
    for (String[] t : new String[][] {{"text", "html"}, {"application", "json"}}) {
      assertThat(Accept.quality(header, t[0], t[1])).as(header)
          .isEqualTo(reference(header, t[0], t[1]));
    }
  }

  /** The per-thread memo answers as judging anew does, whatever came before on the thread. */
  @Property(tries = 300)
  void theMemo_neverAnswersForAnotherHeader(@ForAll("headers") String a,
      @ForAll("headers") String b) {
    for (String h : new String[] {a, b, a, new String(b.toCharArray()), b, a}) {
      assertThat(Accept.prefersHtml(h)).as(h).isEqualTo(Accept.judge(h));
    }
  }

  /** The reading as it was written before: split, trim, parse. */
  static double reference(String header, String type, String sub) {
    double best = 0;
    int specificity = -1;
    for (String range : header.split(",", 64)) {
      String[] parts = range.split(";", 16);
      String m = parts[0].trim().toLowerCase(Locale.ROOT);
      int slash = m.indexOf('/');
      if (slash < 0) {
        continue;
      }
      String t = m.substring(0, slash);
      String s = m.substring(slash + 1);
      int spec = t.equals(type) && s.equals(sub) ? 2 : t.equals(type) && s.equals("*") ? 1
          : t.equals("*") && s.equals("*") ? 0 : -1;
      if (spec < 0) {
        continue;
      }
      double q = 1;
      for (int i = 1; i < parts.length; i++) {
        String p = parts[i].trim();
        if (p.length() > 2 && (p.charAt(0) == 'q' || p.charAt(0) == 'Q') && p.charAt(1) == '=') {
          try {
            q = Double.parseDouble(p.substring(2).trim());
          } catch (NumberFormatException e) {
            q = 0;
          }
          if (!(q >= 0 && q <= 1)) {
            q = 0;
          }
        }
      }
      if (spec > specificity) {
        specificity = spec;
        best = q;
      }
    }
    return best;
  }
}
