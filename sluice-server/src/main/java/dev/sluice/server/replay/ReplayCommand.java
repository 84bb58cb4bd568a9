package dev.sluice.server.replay;

import dev.sluice.core.Rule;
import dev.sluice.core.Secrets;
import dev.sluice.core.policy.Policy;
import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.server.Policies;
import dev.sluice.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code sluice replay}: runs access logs through a policy with the real engine and prints who it
 * would have refused ({@code --json}, {@code --report FILE}, {@code --suggest SHARE},
 * {@code --compare FILE}). Exit codes: 0 done, 1 an input could not be read (the summary of
 * what was read before it is still printed), 2 an invalid policy, 64 a bad command line.
 */
public final class ReplayCommand {

  public static final int OK = 0;
  public static final int INPUT_FAILED = 1;
  public static final int INVALID_POLICY = 2;
  public static final int USAGE = 64;

  private final PrintStream out;
  private final PrintStream err;
  private final Map<String, String> env;
  private final InputStream stdin;
  private final boolean terminal;
  private Engine.Listener listener;

  public ReplayCommand(PrintStream out, PrintStream err, Map<String, String> env,
      InputStream stdin, boolean terminal) {
    this.out = out;
    this.err = err;
    this.env = env;
    this.stdin = stdin;
    this.terminal = terminal;
  }

  /** Hears each decision of the first policy (tests); only with one thread. */
  ReplayCommand listener(Engine.Listener l) {
    this.listener = l;
    return this;
  }

  /**
   * {@code --verdicts}: one line per decided log line, in order: its line number (with several
   * logs, {@code INPUT:LINE}, INPUT counted from 1), the outcome, the rule and the route
   * ({@code -} for none), tab-separated.
   */
  private static Engine.Listener verdictListener(java.io.Writer w, boolean inputs,
      Engine.Listener also) {
    return (r, outcome, rule, route) -> {
      try {
        if (inputs) {
          w.write(Integer.toString(r.input + 1));
          w.write(':');
        }
        w.write(Long.toString(r.line));
        w.write('\t');
        w.write(outcome);
        w.write('\t');
        w.write(rule == null ? "-" : rule);
        w.write('\t');
        w.write(route == null ? "-" : route);
        w.write('\n');
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      if (also != null) {
        also.decided(r, outcome, rule, route);
      }
    };
  }

  /** A command line this command cannot use: the message names the flag and what it expects. */
  public static final class UsageError extends Exception {
    private static final long serialVersionUID = 1L;

    public UsageError(String message) {
      super(message);
    }
  }

  /**
   * Runs with {@code options} (flag to value, switches to "true") and the log operands.
   *
   * @throws UsageError for a bad value, with a message for the user
   */
  public int run(Map<String, String> options, List<String> logs) throws UsageError {
    if (logs.isEmpty()) {
      throw new UsageError("replay needs at least one LOG (a file, or - for standard input)");
    }
    LineFormat format;
    try {
      format = Formats.of(options.getOrDefault("--format", "auto"));
    } catch (IllegalArgumentException e) {
      throw new UsageError("--format : " + e.getMessage() + (e.getMessage().startsWith("unknown "
          + "format") ? " (expected: " + Formats.USAGE + ")" : ""));
    }
    int threads = number(options, "--threads", 1, 1, 64);
    int top = number(options, "--top", 10, 1, 1000);
    double suggest = Double.NaN;
    if (options.containsKey("--suggest")) {
      suggest = share(options.get("--suggest"));
    }
    if (threads > 1 && logs.contains("-")) {
      throw new UsageError("--threads " + threads + " reads each log once per thread: give files, "
          + "not standard input");
    }
    LoadedPolicy a = load(options.get("--config"));
    LoadedPolicy b = options.containsKey("--compare") ? load(options.get("--compare")) : null;
    if (a == null || (options.containsKey("--compare") && b == null)) {
      return INVALID_POLICY;
    }
    if (threads > 1) {
      for (LoadedPolicy p : b == null ? List.of(a) : List.of(a, b)) {
        for (Rule rule : p.config().policy().rules().values()) {
          if (!rule.dimensions().contains("ip")) {
            throw new UsageError("--threads " + threads + " splits the log by client address, "
                + "and rule '" + rule.name() + "' of " + p.sourceName() + " is keyed by '"
                + rule.key() + "' (expected: every rule keyed by ip, or --threads 1)");
          }
        }
      }
    }
    int maxKeys = a.config().store().maxKeys();
    int clients = number(options, "--max-clients", maxKeys, 16, 100_000_000);
    Replay.Options o = new Replay.Options(a.config().policy(),
        b == null ? null : b.config().policy(), List.copyOf(logs), format, threads, maxKeys,
        clients, false);
    String verdictsFile = options.get("--verdicts");
    if (verdictsFile != null && threads > 1) {
      throw new UsageError("--verdicts lists the lines in order: give --threads 1");
    }
    java.io.BufferedWriter verdicts = null;
    Engine.Listener heard = listener;
    if (verdictsFile != null) {
      try {
        verdicts = java.nio.file.Files.newBufferedWriter(java.nio.file.Path.of(verdictsFile));
      } catch (java.io.IOException e) {
        err.println("sluice replay: " + verdictsFile + ": " + e.getMessage());
        return 1;
      }
      heard = verdictListener(verdicts, logs.size() > 1, listener);
    }
    Replay replay = new Replay(o, stdin, heard);
    Replay.Result result;
    int code = OK;
    Progress progress = terminal && !options.containsKey("--quiet")
        ? new Progress(err, replay) : null;
    String failure = null;
    try {
      result = replay.run();
      if (verdicts != null) {
        verdicts.close();
      }
    } catch (LogInput.InputException e) {
      failure = e.getMessage();
      result = null;
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      failure = verdictsFile + ": " + e.getMessage();
      result = null;
    } finally {
      if (progress != null) {
        progress.close();
      }
    }
    if (result == null) {
      err.println("sluice replay: " + failure);
      return INPUT_FAILED;
    }
    Map<String, Object> model = ReplayReport.model(result, a.config().policy(), a.sourceName(),
        b == null ? null : b.config().policy(), b == null ? null : b.sourceName(), suggest, top);
    if (options.containsKey("--json")) {
      out.println(JsonOut.write(model, true, false));
    } else {
      out.print(Summary.text(model));
    }
    if (options.containsKey("--report")) {
      Path file = Path.of(options.get("--report"));
      try {
        if (file.toAbsolutePath().getParent() != null) {
          Files.createDirectories(file.toAbsolutePath().getParent());
        }
        Files.writeString(file, HtmlReport.render(model), StandardCharsets.UTF_8);
        err.println("report: " + file);
      } catch (IOException e) {
        err.println("sluice replay: --report " + file + ": cannot write (" + e.getMessage()
            + ")");
        code = INPUT_FAILED;
      }
    }
    return code;
  }

  private LoadedPolicy load(String file) {
    try {
      LoadedPolicy p = Policies.load(file == null ? null : Path.of(file), env);
      p.warnings().forEach(w -> err.println("warning: " + Secrets.mask(w)));
      return p;
    } catch (ConfigException e) {
      List<ConfigError> errors = e.errors();
      err.println((file == null ? PolicyLoader.DEFAULT_NAME : file) + ": invalid policy, "
          + errors.size() + (errors.size() == 1 ? " error:" : " errors:"));
      for (ConfigError error : errors) {
        err.println("  " + Secrets.mask(error.toString()));
      }
      return null;
    }
  }

  private static int number(Map<String, String> o, String flag, int def, int min, int max)
      throws UsageError {
    String v = o.get(flag);
    if (v == null) {
      return def;
    }
    try {
      int n = Integer.parseInt(v.replace("_", "").replace(",", ""));
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new UsageError(flag + " : \"" + v + "\" (expected: a whole number, " + min + ".." + max
        + ")");
  }

  /** {@code 0.1%} or {@code 0.001}: a share of clients, above 0 and below 1. */
  static double share(String v) throws UsageError {
    try {
      String t = v.trim();
      double d = t.endsWith("%") ? Double.parseDouble(t.substring(0, t.length() - 1)) / 100
          : Double.parseDouble(t);
      if (d >= 0 && d < 1) {
        return d;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new UsageError("--suggest : \"" + v + "\" (expected: a share of clients such as 0.1% "
        + "or 0.001, at least 0 and below 100%)");
  }

  /** The operands and flags of {@code args}: {@code --flag VALUE}, {@code --flag=VALUE}, LOGs. */
  public static Map<String, String> parse(List<String> args, Set<String> valued,
      Set<String> switches, List<String> logs) throws UsageError {
    Map<String, String> o = new LinkedHashMap<>();
    List<String> rest = new ArrayList<>();
    boolean operandsOnly = false;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (operandsOnly || a.equals("-") || !a.startsWith("-")) {
        rest.add(a);
        continue;
      }
      if (a.equals("--")) {
        operandsOnly = true;
        continue;
      }
      String name = a;
      String value = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        name = a.substring(0, eq);
        value = a.substring(eq + 1);
      }
      if (switches.contains(name)) {
        if (value != null) {
          throw new UsageError(name + " takes no value");
        }
        value = "true";
      } else if (valued.contains(name)) {
        if (value == null) {
          if (i + 1 >= args.size()) {
            throw new UsageError(name + " needs a value");
          }
          value = args.get(++i);
        }
      } else {
        throw new UsageError("unknown option " + name + " for replay");
      }
      if (o.put(name, value) != null) {
        throw new UsageError(name + " given twice");
      }
    }
    logs.addAll(rest);
    return o;
  }
}
