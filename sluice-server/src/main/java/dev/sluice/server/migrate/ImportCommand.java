package dev.sluice.server.migrate;

import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code sluice import}: another limiter's configuration (nginx, ingress-nginx annotations,
 * envoyproxy/ratelimit, Kong's rate-limiting plugin) as a Sluice policy file, with a comment on
 * every line whose meaning differs and an error for each directive that cannot be carried over.
 * The policy it writes is loaded before it is written: an import never hands out a file that
 * {@code sluice check} would refuse.
 *
 * <p>Exit codes: 0 everything translated; 2 the policy was written but some directives were not
 * translated (each named on standard error); 1 the input could not be read or parsed; 64 a bad
 * command line.
 */
public final class ImportCommand {

  /** The formats, by {@code --from} name. */
  public static final List<String> FORMATS = List.of("nginx", "ingress-nginx", "envoy", "kong");

  private final PrintStream out;
  private final PrintStream err;
  private final InputStream stdin;

  public ImportCommand(PrintStream out, PrintStream err, InputStream stdin) {
    this.out = out;
    this.err = err;
    this.stdin = stdin;
  }

  /** A command line that could not be understood. */
  public static final class UsageError extends Exception {
    private static final long serialVersionUID = 1L;

    UsageError(String message) {
      super(message);
    }
  }

  /** Runs {@code sluice import [--from FORMAT] [--out FILE] FILE}. */
  public int run(List<String> args) throws UsageError {
    String from = "auto";
    String outFile = null;
    String input = null;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String value = null;
      int eq = a.indexOf('=');
      String name = a.startsWith("--") && eq > 0 ? a.substring(0, eq) : a;
      if (a.startsWith("--") && eq > 0) {
        value = a.substring(eq + 1);
      }
      if (name.equals("--from") || name.equals("--out")) {
        if (value == null) {
          if (i + 1 >= args.size()) {
            throw new UsageError(name + " needs a value");
          }
          value = args.get(++i);
        }
        if (name.equals("--from")) {
          if (!FORMATS.contains(value) && !value.equals("auto")) {
            throw new UsageError("--from : " + value + " (expected: one of auto, "
                + String.join(", ", FORMATS) + ")");
          }
          from = value;
        } else {
          outFile = value;
        }
      } else if (a.startsWith("-") && !a.equals("-")) {
        throw new UsageError("unknown option " + a + " for import");
      } else if (input != null) {
        throw new UsageError("one FILE to import (got " + input + " and " + a + ")");
      } else {
        input = a;
      }
    }
    if (input == null) {
      throw new UsageError("import needs a FILE (or - for standard input)");
    }
    String text;
    Path dir;
    try {
      if (input.equals("-")) {
        text = new String(stdin.readAllBytes(), StandardCharsets.UTF_8);
        dir = null;
      } else {
        Path p = Path.of(input);
        text = Files.readString(p);
        dir = p.toAbsolutePath().getParent();
      }
    } catch (IOException e) {
      err.println("sluice import: " + input + ": " + e.getMessage());
      return 1;
    }
    String name = input.equals("-") ? "<stdin>" : input;
    Draft draft;
    try {
      draft = translate(text, name, dir, from);
    } catch (NginxConfig.SyntaxError | IllegalArgumentException e) {
      err.println("sluice import: " + (e instanceof NginxConfig.SyntaxError ? "" : name + ": ")
          + e.getMessage());
      return 1;
    }
    String policy = draft.render();
    try {
      PolicyLoader.parse(policy, "imported policy", null, Map.of());
    } catch (ConfigException e) {
      // A bug of the import, never the user's: say so, and show the file.
      err.println("sluice import: the imported policy is invalid (a bug of sluice import):");
      for (ConfigError ce : e.errors()) {
        err.println("  " + ce);
      }
      err.print(policy);
      return 1;
    }
    if (outFile != null) {
      try {
        Files.writeString(Path.of(outFile), policy);
      } catch (IOException e) {
        err.println("sluice import: " + outFile + ": " + e.getMessage());
        return 1;
      }
    } else {
      out.print(policy);
    }
    for (Draft.Problem p : draft.problems) {
      err.println("sluice import: " + p);
    }
    err.println("sluice import: " + draft.rules.size() + " rule" + (draft.rules.size() == 1
        ? "" : "s") + ", " + draft.routes.size() + " route" + (draft.routes.size() == 1 ? ""
        : "s") + (draft.domains.isEmpty() ? "" : ", the domains") + (draft.problems.isEmpty()
        ? "; everything translated" : "; " + draft.problems.size() + " not translated (above)"));
    return draft.problems.isEmpty() ? 0 : 2;
  }

  /** The policy draft of {@code text}, in {@code format} ({@code auto}: by its content). */
  static Draft translate(String text, String name, Path dir, String format)
      throws NginxConfig.SyntaxError {
    String f = format.equals("auto") ? detect(text, name) : format;
    switch (f) {
      case "nginx":
        return NginxImport.translate(NginxConfig.parse(text, name, dir), name);
      case "envoy":
        return EnvoyImport.translate(text, name);
      case "ingress-nginx":
        return IngressImport.translate(YamlDocs.read(text), name);
      default:
        return KongImport.translate(YamlDocs.read(text), name);
    }
  }

  static String detect(String text, String name) {
    List<Map<String, Object>> docs;
    try {
      docs = YamlDocs.read(text);
    } catch (IllegalArgumentException e) {
      return "nginx";
    }
    if (docs.isEmpty()) {
      return "nginx";
    }
    if (docs.stream().anyMatch(d -> "Ingress".equals(YamlDocs.string(d, "kind")))) {
      return "ingress-nginx";
    }
    if (EnvoyImport.looksLike(docs)) {
      return "envoy";
    }
    if (docs.stream().anyMatch(d -> d.containsKey("_format_version") || d.containsKey("plugins")
        || d.containsKey("services") || "rate-limiting".equals(YamlDocs.string(d, "name")))) {
      return "kong";
    }
    throw new IllegalArgumentException("cannot tell its format (expected: an nginx "
        + "configuration, an Ingress, an envoyproxy/ratelimit file or a Kong configuration); "
        + "give --from " + String.join("|", FORMATS));
  }
}
