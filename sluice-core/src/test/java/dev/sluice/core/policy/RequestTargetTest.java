package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.policy.RequestTarget.EncodedSlashes;
import dev.sluice.core.policy.RequestTarget.Parameters;
import dev.sluice.core.policy.RequestTarget.Rules;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The one request-path rule (issue 20, item 2): the path matched is the path forwarded. */
class RequestTargetTest {

  private static final Rules DEFAULTS = Rules.defaults();

  private static String path(String target) {
    RequestTarget t = RequestTarget.parse(target, DEFAULTS);
    assertThat(t.ok()).as("%s: %s", target, t.problem()).isTrue();
    return t.path();
  }

  private static String problem(String target, Rules rules) {
    RequestTarget t = RequestTarget.parse(target, rules);
    assertThat(t.ok()).as(target).isFalse();
    return t.problem();
  }

  @Test
  void absoluteForm_isReducedToItsPath_andKeepsItsAuthority() {
    RequestTarget t = RequestTarget.parse("http://x.example:8080/api/analysis/x?a=1", DEFAULTS);
    assertThat(t.path()).isEqualTo("/api/analysis/x");
    assertThat(t.query()).isEqualTo("a=1");
    assertThat(t.authority()).isEqualTo("x.example:8080");
    assertThat(t.forwardTarget()).isEqualTo("/api/analysis/x?a=1");
    assertThat(path("HTTPS://x")).isEqualTo("/");
    assertThat(RequestTarget.parse("http://x?q", DEFAULTS).forwardTarget()).isEqualTo("/?q");
    assertThat(RequestTarget.parse("/a", DEFAULTS).authority()).isNull();
  }

  @Test
  void bypassSpellings_ofStrict_allReadAsStrict() {
    assertThat(path("/strict;x=1/a")).isEqualTo("/strict/a");
    assertThat(path("/x/%2e%2E/strict/a")).isEqualTo("/strict/a");
    assertThat(path("//strict//a")).isEqualTo("/strict/a");
    assertThat(path("/./strict/./a")).isEqualTo("/strict/a");
    assertThat(path("/%73trict/a")).isEqualTo("/strict/a");
    assertThat(path("/strict/..;/strict/a")).isEqualTo("/strict/a");
    assertThat(path("/../../strict/a")).isEqualTo("/strict/a");
  }

  @Test
  void slashesAndBackslashes_encoded_areRefusedByDefault_orKeptAsData() {
    assertThat(problem("/strict%2Fa", DEFAULTS)).contains("encoded slash");
    assertThat(problem("/strict%5ca", DEFAULTS)).contains("encoded slash");
    assertThat(problem("/x\\..\\strict/a", DEFAULTS)).contains("backslash");
    Rules keep = new Rules(Parameters.STRIP, EncodedSlashes.KEEP);
    assertThat(RequestTarget.parse("/strict%2fa", keep).path()).isEqualTo("/strict%2Fa");
    assertThat(problem("/x\\a", keep)).contains("backslash");
  }

  @Test
  void percentEncoding_unreservedDecoded_othersKeptUpperCase_malformedRefused() {
    assertThat(path("/%41%7e%2d")).isEqualTo("/A~-");
    assertThat(path("/a%20b%3f")).isEqualTo("/a%20b%3F");
    assertThat(path("/%25")).isEqualTo("/%25");
    assertThat(problem("/a%", DEFAULTS)).contains("percent");
    assertThat(problem("/a%4", DEFAULTS)).contains("percent");
    assertThat(problem("/a%4g", DEFAULTS)).contains("percent");
    assertThat(problem("/a%00", DEFAULTS)).contains("NUL");
  }

  @Test
  void pathParameters_strip_keep_refuse() {
    assertThat(RequestTarget.parse("/a;jsessionid=1/b;v=2", DEFAULTS).path()).isEqualTo("/a/b");
    Rules keep = new Rules(Parameters.KEEP, EncodedSlashes.REFUSE);
    assertThat(RequestTarget.parse("/a;x/b", keep).path()).isEqualTo("/a;x/b");
    assertThat(RequestTarget.parse("/a/..;x/b", keep).path()).isEqualTo("/a/..;x/b");
    Rules refuse = new Rules(Parameters.REFUSE, EncodedSlashes.REFUSE);
    assertThat(problem("/a;x/b", refuse)).contains("path parameter");
  }

  @Test
  void trailingSlashAndRoot_keptAsRfc3986Has() {
    assertThat(path("/")).isEqualTo("/");
    assertThat(path("/a/")).isEqualTo("/a/");
    assertThat(path("/a/.")).isEqualTo("/a/");
    assertThat(path("/a/..")).isEqualTo("/");
    assertThat(path("/a//")).isEqualTo("/a/");
    assertThat(path("//")).isEqualTo("/");
  }

  @Test
  void otherForms_refused_asteriskKept() {
    assertThat(RequestTarget.parse("*", DEFAULTS).asterisk()).isTrue();
    assertThat(problem("example.com:443", DEFAULTS)).contains("neither");
    assertThat(problem("ftp://x/a", DEFAULTS)).contains("neither");
    assertThat(problem("http:///a", DEFAULTS)).contains("without a host");
    assertThat(problem("http://u@x/a", DEFAULTS)).contains("userinfo");
    assertThat(problem("/a#b", DEFAULTS)).contains("fragment");
    assertThat(problem("", DEFAULTS)).contains("empty");
  }

  @Test
  void normalPath_isReturnedAsTheSameString() {
    String p = "/api/analysis/x";
    assertThat(RequestTarget.parse(p, DEFAULTS).path()).isSameAs(p);
    assertThat(RequestTarget.normalizePath(p, DEFAULTS)).isSameAs(p);
  }

  @Test
  void normalizePath_readsWhatParseRefuses_asKeptData() {
    assertThat(RequestTarget.normalizePath("/strict%2Fa/../b", DEFAULTS)).isEqualTo("/b");
    assertThat(RequestTarget.normalizePath("strict/a", DEFAULTS)).isEqualTo("/strict/a");
  }

  @Provide
  Arbitrary<String> paths() {
    Arbitrary<String> piece = Arbitraries.of("a", "B", "api", ".", "..", "", ";x=1", "%2e",
        "%2E%2e", "%41", "%20", "%2f", "%5C", "%", "%zz", "\\", "~", "-", "%25", "%3b");
    return piece.list().ofMaxSize(8).map(list -> "/" + String.join("/", list));
  }

  @Property
  void normalising_isIdempotent(@ForAll("paths") String raw) {
    for (Rules rules : allRules()) {
      RequestTarget once = RequestTarget.parse(raw, rules);
      if (once.ok()) {
        RequestTarget twice = RequestTarget.parse(once.path(), rules);
        assertThat(twice.ok()).isTrue();
        assertThat(twice.path()).isEqualTo(once.path());
      }
    }
  }

  @Property
  void agreesWithAReferenceModel(@ForAll("paths") String raw) {
    for (Rules rules : allRules()) {
      RequestTarget t = RequestTarget.parse(raw, rules);
      String expected = reference(raw, rules);
      if (expected == null) {
        assertThat(t.ok()).as("%s under %s", raw, rules).isFalse();
      } else {
        assertThat(t.path()).as("%s under %s", raw, rules).isEqualTo(expected);
      }
    }
  }

  private static List<Rules> allRules() {
    List<Rules> all = new ArrayList<>();
    for (Parameters p : Parameters.values()) {
      for (EncodedSlashes e : EncodedSlashes.values()) {
        all.add(new Rules(p, e));
      }
    }
    return all;
  }

  /**
   * The rule written the slow, obvious way: split on '/', decode each segment's escapes
   * (unreserved ones decoded, others upper-cased), strip parameters, resolve dots on a stack.
   */
  private static String reference(String raw, Rules rules) {
    if (raw.indexOf('\\') >= 0) {
      return null;
    }
    String[] parts = raw.substring(1).split("/", -1);
    List<String> stack = new ArrayList<>();
    boolean trailing = false;
    for (int k = 0; k < parts.length; k++) {
      String seg = decode(parts[k], rules);
      if (seg == null) {
        return null;
      }
      if (seg.indexOf(';') >= 0) {
        if (rules.parameters() == Parameters.REFUSE) {
          return null;
        }
        if (rules.parameters() == Parameters.STRIP) {
          seg = seg.substring(0, seg.indexOf(';'));
        }
      }
      if (seg.equals("..")) {
        if (!stack.isEmpty()) {
          stack.remove(stack.size() - 1);
        }
      } else if (!seg.equals(".") && !seg.isEmpty()) {
        stack.add(seg);
      }
      trailing = seg.equals("..") || seg.equals(".") || seg.isEmpty();
    }
    String out = stack.isEmpty() ? "/" : "/" + String.join("/", stack);
    return trailing && !stack.isEmpty() ? out + "/" : out;
  }

  private static String decode(String seg, Rules rules) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < seg.length(); i++) {
      char c = seg.charAt(i);
      if (c != '%') {
        sb.append(c);
        continue;
      }
      if (i + 2 >= seg.length()) {
        return null;
      }
      int hi = Character.digit(seg.charAt(i + 1), 16);
      int lo = Character.digit(seg.charAt(i + 2), 16);
      if (hi < 0 || lo < 0) {
        return null;
      }
      int v = hi * 16 + lo;
      if (v == 0 || ((v == '/' || v == '\\') && rules.encodedSlashes() == EncodedSlashes.REFUSE)) {
        return null;
      }
      if (Character.isLetterOrDigit(v) && v < 128 || v == '-' || v == '.' || v == '_' || v == '~') {
        sb.append((char) v);
      } else {
        sb.append('%').append(String.format("%02X", v));
      }
      i += 2;
    }
    return sb.toString();
  }
}
