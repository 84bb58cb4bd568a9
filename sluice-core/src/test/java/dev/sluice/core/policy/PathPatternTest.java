package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Globs over a path read in place, against matching its split segments. */
class PathPatternTest {

  @Test
  void globs() {
    assertThat(PathPattern.parse("/api/**").matches("/api")).isTrue();
    assertThat(PathPattern.parse("/api/**").matches("/api/")).isTrue();
    assertThat(PathPattern.parse("/api/**").matches("/api/a/b")).isTrue();
    assertThat(PathPattern.parse("/api/**").matches("/apix")).isFalse();
    assertThat(PathPattern.parse("/api/*").matches("/api/a")).isTrue();
    assertThat(PathPattern.parse("/api/*").matches("/api/a/b")).isFalse();
    assertThat(PathPattern.parse("/api/*.json").matches("/api/x.json")).isTrue();
    assertThat(PathPattern.parse("/**/x").matches("/a/b/x")).isTrue();
    assertThat(PathPattern.parse("/").matches("/")).isTrue();
    assertThat(PathPattern.parse("/STRICT/**", true).matches("/strict/a")).isTrue();
    assertThat(PathPattern.parse("/STRICT/**").matches("/strict/a")).isFalse();
  }

  @Provide
  Arbitrary<String> patterns() {
    return Arbitraries.of("a", "b", "*", "**", "a*", "*b", "a*b", "x").list().ofMaxSize(4)
        .map(l -> "/" + String.join("/", l));
  }

  @Provide
  Arbitrary<String> paths() {
    return Arbitraries.of("a", "b", "ab", "aab", "x", "B").list().ofMaxSize(5)
        .map(l -> "/" + String.join("/", l)).flatMap(p -> Arbitraries.of(p, p + "/"));
  }

  @Property(tries = 1000)
  void agreesWithSegmentMatching(@ForAll("patterns") String pattern,
      @ForAll("paths") String path, @ForAll boolean ignoreCase) {
    PathPattern p = PathPattern.parse(pattern, ignoreCase);
    assertThat(p.matches(path)).as("%s %s", pattern, path)
        .isEqualTo(reference(split(pattern), split(path), 0, 0, ignoreCase));
  }

  private static List<String> split(String s) {
    List<String> out = new ArrayList<>();
    for (String seg : s.split("/")) {
      if (!seg.isEmpty()) {
        out.add(seg);
      }
    }
    return out;
  }

  private static boolean reference(List<String> pat, List<String> path, int p, int s,
      boolean ignoreCase) {
    if (s == pat.size()) {
      return p == path.size();
    }
    if (pat.get(s).equals("**")) {
      for (int i = p; i <= path.size(); i++) {
        if (reference(pat, path, i, s + 1, ignoreCase)) {
          return true;
        }
      }
      return false;
    }
    return p < path.size() && path.get(p).matches(regex(pat.get(s), ignoreCase))
        && reference(pat, path, p + 1, s + 1, ignoreCase);
  }

  private static String regex(String glob, boolean ignoreCase) {
    return (ignoreCase ? "(?i)" : "") + glob.replace("*", ".*");
  }
}
