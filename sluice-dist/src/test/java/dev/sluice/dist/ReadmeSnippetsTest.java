package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles every {@code ```java} block of README.md against this module's test classpath (every
 * library module), so the README's imports and signatures are the real ones.
 *
 * <p>The convention: a block that declares a top-level class, record, interface or enum is one
 * compilation unit, compiled as written. Any other block is statements: its leading {@code import}
 * lines stay imports, and the rest becomes the body of a method of a subclass of
 * {@link ReadmeSnippetApp}, which declares the few names such a snippet takes from the reader's
 * own code ({@code name}, {@code reject(...)}). Either way the snippet must import every type it
 * uses. Errors are reported as {@code README.md:LINE: message}.
 */
class ReadmeSnippetsTest {

  static final Path README = Path.of(System.getProperty("sluice.root")).resolve("README.md").normalize();
  private static final Pattern TYPE = Pattern.compile("(?m)^(?:public |abstract |final )*(?:class|record|interface|enum) ");

  record Snippet(int line, String code) {}

  static List<Snippet> snippets(List<String> lines) {
    List<Snippet> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).strip().equals("```java")) {
        int start = i + 1;
        StringBuilder code = new StringBuilder();
        for (i = start; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
          code.append(lines.get(i)).append('\n');
        }
        out.add(new Snippet(start + 1, code.toString()));
      }
    }
    return out;
  }

  /** The snippet as a compilation unit whose line n is the snippet's line n. */
  static String unit(String className, String code) {
    if (TYPE.matcher(code).find()) {
      return code;
    }
    String[] lines = code.split("\n", -1);
    int imports = 0;
    while (imports < lines.length && (lines[imports].isBlank() || lines[imports].startsWith("import "))) {
      imports++;
    }
    String open = "class " + className + " extends " + ReadmeSnippetApp.class.getName()
        + " { void snippet() throws Exception { ";
    if (imports > 0) {
      lines[imports - 1] += " " + open;
    } else {
      lines[0] = open + lines[0];
    }
    return String.join("\n", lines) + "}}\n";
  }

  @Test
  void readme_hasJavaSnippets_ofTheLibraryRedisAndModerationSections() throws IOException {
    String all = String.join("\n", snippets(Files.readAllLines(README)).stream().map(Snippet::code).toList());
    assertThat(all).contains("RateLimiter.of(", "RedisStore.builder()", "Moderator.builder()");
  }

  @Test
  void everyJavaSnippetOfTheReadme_compiles(@TempDir Path out) throws IOException {
    List<String> errors = compile(snippets(Files.readAllLines(README)), out);
    assertThat(errors).as("README.md snippets that do not compile").isEmpty();
  }

  @Test
  void aBrokenSnippet_isReportedWithItsReadmeLine(@TempDir Path out) {
    List<Snippet> broken = List.of(new Snippet(40, "import dev.sluice.core.RateLimiter;\n\nRateLimiter l = RateLimiter.of();\n"));
    assertThat(compile(broken, out)).singleElement().asString().startsWith("README.md:42: ");
  }

  static List<String> compile(List<Snippet> snippets, Path out) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    List<JavaFileObject> units = new ArrayList<>();
    for (Snippet s : snippets) {
      String name = "ReadmeLine" + s.line();
      String code = unit(name, s.code());
      units.add(new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
          return code;
        }

        @Override
        public String getName() {
          return Integer.toString(s.line());
        }
      });
    }
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> options = List.of("-classpath", classpath, "-d", out.toString(), "-proc:none",
        "-implicit:none", "-encoding", "UTF-8");
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      javac.getTask(null, files, diagnostics, options, null, units).call();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    List<String> errors = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      if (d.getKind() == Diagnostic.Kind.ERROR) {
        long line = Long.parseLong(d.getSource().getName()) + d.getLineNumber() - 1;
        errors.add("README.md:" + line + ": " + d.getMessage(Locale.ROOT));
      }
    }
    return errors;
  }
}
