package dev.sluice.server;

import dev.sluice.core.Secrets;
import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.Durations;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyFormat;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.RlsSettings;
import dev.sluice.server.admin.AdminOptions;
import dev.sluice.server.log.Logging;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The {@code sluice} command: {@code serve} (the default), {@code check}, {@code moderate},
 * {@code admin}, {@code replay}, {@code import}, {@code --help}, {@code --version}.
 *
 * <p>Exit codes: 0 success; 1 the server could not start (a port in use, a store that cannot be
 * opened, Redis refusing the credentials); 2 the policy is invalid; 64 the command line is wrong
 * (sysexits' EX_USAGE).
 */
public final class Main {

  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int INVALID_POLICY = 2;
  public static final int USAGE = 64;

  /** {@code sluice --help}; each command's own help is {@link Commands#help}. */
  static final String USAGE_TEXT = Commands.usage();

  private final PrintStream out;
  private final PrintStream err;
  private final Map<String, String> env;
  private final java.io.InputStream stdin;

  public Main(PrintStream out, PrintStream err, Map<String, String> env) {
    this(out, err, env, System.in);
  }

  /** A command line reading {@code stdin} where a command reads standard input (replay's -). */
  public Main(PrintStream out, PrintStream err, Map<String, String> env,
      java.io.InputStream stdin) {
    this.out = out;
    this.err = err;
    this.env = env;
    this.stdin = stdin;
  }

  public static void main(String[] args) {
    // Netty 4.2's buffer allocator declares JFR events, and with JFR available (always, on a
    // JDK) its first allocation sets up JFR's event metadata: about 100 classes and 80 ms of the
    // start-up's CPU (issue 21). Without a recording they are never emitted anyway;
    // -Dio.netty.jfr.enabled=true turns them back on for a JFR session. Set before any Netty
    // class reads it.
    if (System.getProperty("io.netty.jfr.enabled") == null) {
      System.setProperty("io.netty.jfr.enabled", "false");
    }
    // Netty samples 1 buffer in 128 for leak reports by default, each with a stack trace: a
    // development aid that cost 1% of the gateway's CPU. -Dio.netty.leakDetection.level=simple
    // turns it back on.
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
    }
    int code = new Main(System.out, System.err, System.getenv()).run(args);
    if (code != OK) {
      System.exit(code);
    }
  }

  /** A command line that could not be understood. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  /** Runs the command line; {@code serve} blocks until the JVM is asked to stop. */
  public int run(String[] args) {
    List<String> rest = new ArrayList<>(List.of(args));
    String name = null;
    if (!rest.isEmpty() && !rest.get(0).startsWith("-")) {
      name = rest.remove(0);
    }
    Commands.Command command = name == null ? Commands.SERVE : Commands.find(name);
    List<String> flags = flagsOf(rest);
    if ("help".equals(name)) {
      if (rest.isEmpty()) {
        out.print(USAGE_TEXT);
        return OK;
      }
      command = Commands.find(rest.get(0));
      if (command == null || rest.size() > 1) {
        return usageError(null, "unknown command '" + String.join(" ", rest) + "' (expected: "
            + Commands.names() + ")");
      }
      out.print(Commands.help(command));
      return OK;
    }
    if (flags.contains("--version") || flags.contains("-V") || "version".equals(name)) {
      out.println("sluice " + Version.get());
      return OK;
    }
    if (command == null) {
      return usageError(null, "unknown command '" + name + "' (expected: " + Commands.names()
          + ")");
    }
    if (flags.contains("--help") || flags.contains("-h")) {
      out.print(name == null ? USAGE_TEXT : Commands.help(command));
      return OK;
    }
    try {
      switch (command.name()) {
        case "serve":
          return serve(parseServe(rest, env), parseLog(rest, env));
        case "check":
          return check(parseCheck(rest));
        case "admin":
          return new AdminCommand(out, err, env).run(rest);
        case "replay":
          return replay(rest);
        case "import":
          try {
            return new dev.sluice.server.migrate.ImportCommand(out, err, stdin).run(rest);
          } catch (dev.sluice.server.migrate.ImportCommand.UsageError e) {
            return usageError(Commands.IMPORT, e.getMessage());
          }
        case "moderate":
          try {
            return new ModerateCommand(out, err).run(rest);
          } catch (UsageException e) {
            // Issue 12: a list-testing tool's bad usage is exit 2, like its bad lists.
            err.println("sluice: " + e.getMessage());
            return INVALID_POLICY;
          }
        default:
          throw new AssertionError(command.name());
      }
    } catch (UsageException e) {
      err.println("sluice: " + e.getMessage());
      return USAGE;
    }
  }

  /** {@code sluice replay}: its flags from the command table, the logs after them. */
  private int replay(List<String> args) {
    java.util.Set<String> valued = new java.util.HashSet<>();
    java.util.Set<String> switches = new java.util.HashSet<>();
    Commands.REPLAY.flags().forEach(f -> (f.isSwitch() ? switches : valued).add(f.name()));
    // The engine's own warnings (forwarding headers no proxy is trusted for) in the server
    // log's format, on standard error.
    Log previous = Log.process();
    Logging.setUp(new Log(err, Log.Level.WARN, Log.Format.TEXT));
    try {
      List<String> logs = new ArrayList<>();
      Map<String, String> o = dev.sluice.server.replay.ReplayCommand.parse(args, valued,
          switches, logs);
      return new dev.sluice.server.replay.ReplayCommand(out, err, env, stdin,
          System.console() != null).run(o, logs);
    } catch (dev.sluice.server.replay.ReplayCommand.UsageError e) {
      return usageError(Commands.REPLAY, e.getMessage());
    } finally {
      Log.install(previous);
    }
  }

  /** One line naming what is wrong, and where to look: never the whole usage. */
  private int usageError(Commands.Command command, String message) {
    err.println("sluice: " + message + " " + Commands.hint(command));
    return USAGE;
  }

  /** The arguments before a lone {@code --} (after it, {@code --help} is a text to moderate). */
  private static List<String> flagsOf(List<String> args) {
    int end = args.indexOf("--");
    return end < 0 ? args : args.subList(0, end);
  }

  /** A flag {@code command} does not have, as one line with the hint. */
  static UsageException unknownOption(Commands.Command command, String flag) {
    return new UsageException("unknown option " + flag + " for " + command.name() + " "
        + Commands.hint(command));
  }

  static Map<String, String> options(List<String> args, Commands.Command command)
      throws UsageException {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      String name = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        name = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      if (!arg.startsWith("-")) {
        throw new UsageException("unexpected argument '" + arg + "' for " + command.name() + " "
            + Commands.hint(command));
      }
      if (!command.accepts(name)) {
        throw unknownOption(command, name);
      }
      if (command.isSwitch(name)) {
        if (value != null) {
          throw new UsageException(name + " takes no value " + Commands.hint(command));
        }
        value = "true";
      } else if (value == null) {
        if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
          throw new UsageException(name + " needs a value " + Commands.hint(command));
        }
        value = args.get(++i);
      }
      if (options.put(name, value) != null) {
        throw new UsageException(name + " given twice " + Commands.hint(command));
      }
    }
    return options;
  }

  static ServeOptions parseServe(List<String> args, Map<String, String> env)
      throws UsageException {
    Map<String, String> o = options(args, Commands.SERVE);
    boolean dryRun = o.containsKey("--dry-run");
    ServeOptions d = ServeOptions.defaults();
    Path config = o.containsKey("--config") ? Path.of(o.get("--config")) : null;
    String l = o.get("--listen");
    InetSocketAddress listen = l == null ? d.listen()
        : l.equals("off") || l.equals("none") ? null : hostPort("--listen", l, "0.0.0.0");
    InetSocketAddress rls = o.containsKey("--rls")
        ? hostPort("--rls", o.get("--rls"), "0.0.0.0") : null;
    InetSocketAddress admin = d.admin();
    if (o.containsKey("--admin")) {
      String a = o.get("--admin");
      admin = a.equals("off") || a.equals("none") ? null : hostPort("--admin", a, "127.0.0.1");
    }
    URI upstream = o.containsKey("--upstream") ? upstream(o.get("--upstream")) : null;
    String store = null;
    if (o.containsKey("--store")) {
      try {
        store = PolicyLoader.storeUri(o.get("--store"));
      } catch (IllegalArgumentException e) {
        throw new UsageException("--store : \"" + Secrets.mask(o.get("--store")) + "\" (expected: "
            + e.getMessage() + ")");
      }
    } else if (env.get("SLUICE_STORE") != null && !env.get("SLUICE_STORE").isBlank()) {
      try {
        store = PolicyLoader.storeUri(env.get("SLUICE_STORE"));
      } catch (IllegalArgumentException e) {
        throw new UsageException("SLUICE_STORE : \"" + Secrets.mask(env.get("SLUICE_STORE"))
            + "\" (expected: " + e.getMessage() + ")");
      }
    }
    int ioThreads = 0;
    if (o.containsKey("--io-threads")) {
      String n = o.get("--io-threads");
      try {
        ioThreads = Integer.parseInt(n);
      } catch (NumberFormatException e) {
        ioThreads = -1;
      }
      if (ioThreads < 1 || ioThreads > 1024) {
        throw new UsageException("--io-threads : \"" + n + "\" (expected: 1..1024)");
      }
    }
    String token = o.containsKey("--admin-token-file") ? o.get("--admin-token-file")
        : env.get("SLUICE_ADMIN_TOKEN_FILE") != null
            && !env.get("SLUICE_ADMIN_TOKEN_FILE").isBlank()
            ? env.get("SLUICE_ADMIN_TOKEN_FILE").trim() : null;
    String checkApi = null;
    if (o.containsKey("--check-api")) {
      try {
        checkApi = RlsSettings.checkApiPlace(o.get("--check-api"));
      } catch (IllegalArgumentException e) {
        throw new UsageException("--check-api : \"" + o.get("--check-api") + "\" (expected: "
            + e.getMessage() + ")");
      }
      if (!List.of("off", "admin", "gateway").contains(checkApi)) {
        hostPort("--check-api", checkApi, "127.0.0.1");
      }
    }
    return new ServeOptions(config, listen, upstream, admin, store, Duration.ofSeconds(1),
        ioThreads, rls, dryRun, token == null ? null : Path.of(token), tls(o, upstream),
        checkApi, adminOptions(o, env));
  }

  /** The admin listener's names, timeouts and cap from their flags (and SLUICE_ADMIN_HOSTS). */
  private static AdminOptions adminOptions(Map<String, String> o, Map<String, String> env)
      throws UsageException {
    AdminOptions a = AdminOptions.DEFAULTS;
    try {
      String hosts = setting(o, "--admin-hosts", env, "SLUICE_ADMIN_HOSTS");
      if (hosts != null) {
        List<String> names = new ArrayList<>();
        for (String h : hosts.split(",")) {
          if (!h.isBlank()) {
            names.add(h.strip());
          }
        }
        a = a.withHosts(names);
      }
      if (o.containsKey("--admin-head-timeout")) {
        a = a.withHeadTimeout(duration(o, "--admin-head-timeout"));
      }
      if (o.containsKey("--admin-body-timeout")) {
        a = a.withBodyTimeout(duration(o, "--admin-body-timeout"));
      }
      if (o.containsKey("--admin-idle-timeout")) {
        a = a.withIdleTimeout(duration(o, "--admin-idle-timeout"));
      }
      if (o.containsKey("--admin-max-connections")) {
        String n = o.get("--admin-max-connections");
        int max;
        try {
          max = Integer.parseInt(n);
        } catch (NumberFormatException e) {
          throw new UsageException("--admin-max-connections : \"" + n + "\" (expected: a "
              + "number of connections like 128)");
        }
        a = a.withMaxConnections(max);
      }
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
    return a;
  }

  private static Duration duration(Map<String, String> o, String flag) throws UsageException {
    try {
      return Durations.parsePositive(o.get(flag));
    } catch (IllegalArgumentException e) {
      throw new UsageException(flag + " : \"" + o.get(flag) + "\" (expected: " + e.getMessage()
          + ")");
    }
  }

  /** The process's log from {@code --log-level}/{@code --log-format} or their variables. */
  Log parseLog(List<String> args, Map<String, String> env) throws UsageException {
    Map<String, String> o = options(args, Commands.SERVE);
    Log.Level level = Log.Level.INFO;
    Log.Format format = Log.Format.TEXT;
    String l = setting(o, "--log-level", env, "SLUICE_LOG_LEVEL");
    String f = setting(o, "--log-format", env, "SLUICE_LOG_FORMAT");
    try {
      if (l != null) {
        level = Log.Level.parse(l);
      }
    } catch (IllegalArgumentException e) {
      throw new UsageException((o.containsKey("--log-level") ? "--log-level" : "SLUICE_LOG_LEVEL")
          + " : " + e.getMessage());
    }
    try {
      if (f != null) {
        format = Log.Format.parse(f);
      }
    } catch (IllegalArgumentException e) {
      throw new UsageException((o.containsKey("--log-format") ? "--log-format"
          : "SLUICE_LOG_FORMAT") + " : " + e.getMessage());
    }
    return new Log(err, level, format);
  }

  /** The flag's value, else the variable's when set and not blank, else null. */
  private static String setting(Map<String, String> o, String flag, Map<String, String> env,
      String variable) {
    if (o.containsKey(flag)) {
      return o.get(flag);
    }
    String v = env.get(variable);
    return v == null || v.isBlank() ? null : v;
  }

  private static TlsOptions tls(Map<String, String> o, URI upstream) throws UsageException {
    if (o.containsKey("--tls-cert") != o.containsKey("--tls-key")) {
      throw new UsageException(o.containsKey("--tls-cert") ? "--tls-cert needs --tls-key"
          : "--tls-key needs --tls-cert");
    }
    for (String flag : List.of("--upstream-ca", "--upstream-sni")) {
      if (o.containsKey(flag) && (upstream == null || !"https".equals(upstream.getScheme()))) {
        throw new UsageException(flag + " needs an https:// --upstream");
      }
    }
    Path cert = o.containsKey("--tls-cert") ? Path.of(o.get("--tls-cert")) : null;
    Path key = o.containsKey("--tls-key") ? Path.of(o.get("--tls-key")) : null;
    Path ca = o.containsKey("--upstream-ca") ? Path.of(o.get("--upstream-ca")) : null;
    return new TlsOptions(cert, key, ca, o.get("--upstream-sni"));
  }

  static Path parseCheck(List<String> args) throws UsageException {
    List<String> rest = new ArrayList<>(args);
    if (rest.size() == 1 && !rest.get(0).startsWith("-")) {
      return Path.of(rest.get(0));
    }
    Map<String, String> o = options(rest, Commands.CHECK);
    return o.containsKey("--config") ? Path.of(o.get("--config")) : null;
  }

  /** {@code HOST:PORT}, {@code [::1]:PORT}, {@code :PORT} or {@code PORT}. */
  static InetSocketAddress hostPort(String flag, String text, String defaultHost)
      throws UsageException {
    String host = defaultHost;
    String port = text;
    int colon = text.lastIndexOf(':');
    if (colon >= 0) {
      host = text.substring(0, colon);
      port = text.substring(colon + 1);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      } else if (host.contains(":")) {
        throw new UsageException(flag + " : \"" + text
            + "\" (expected: HOST:PORT, with IPv6 hosts in brackets like [::1]:8080)");
      }
      if (host.isEmpty()) {
        host = defaultHost;
      }
    }
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      p = -1;
    }
    if (p < 0 || p > 65535 || host.isBlank()) {
      throw new UsageException(flag + " : \"" + text
          + "\" (expected: HOST:PORT like 0.0.0.0:8080, port 0..65535)");
    }
    return new InetSocketAddress(host, p);
  }

  static URI upstream(String text) throws UsageException {
    try {
      URI uri = new URI(text);
      if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          && uri.getHost() != null) {
        return uri;
      }
    } catch (URISyntaxException e) {
      // falls through
    }
    throw new UsageException("--upstream : \"" + text
        + "\" (expected: an http:// or https:// URL like http://127.0.0.1:3000)");
  }

  private int check(Path file) {
    LoadedPolicy loaded;
    try {
      loaded = Policies.load(file, env);
    } catch (ConfigException e) {
      e.warnings().forEach(w -> err.println("warning: " + Secrets.mask(w)));
      List<ConfigError> errors = e.errors();
      err.println((file == null ? PolicyLoader.DEFAULT_NAME : file) + ": invalid policy, "
          + errors.size() + (errors.size() == 1 ? " error:" : " errors:"));
      for (ConfigError error : errors) {
        err.println("  " + Secrets.mask(error.toString()));
      }
      return INVALID_POLICY;
    }
    loaded.warnings().forEach(w -> err.println("warning: " + Secrets.mask(w)));
    out.println("# effective policy of " + loaded.sourceName()
        + " (environment applied, defaults filled in)");
    out.print(PolicyFormat.toYaml(loaded.effective()));
    err.println(loaded.sourceName() + ": valid (" + loaded.summary() + ")");
    return OK;
  }

  private int serve(ServeOptions options, Log log) {
    Log previous = Log.process();
    Logging.setUp(log);
    try {
      return serveWith(options, log);
    } finally {
      // In production the process ends here; in a test the next run logs where it did before.
      Log.install(previous);
    }
  }

  private int serveWith(ServeOptions options, Log log) {
    SluiceServer server;
    try {
      server = SluiceServer.start(options, env, log);
    } catch (ConfigException e) {
      log.error("invalid policy; not starting", "errors", e.errors().size());
      for (ConfigError error : e.errors()) {
        err.println("  " + Secrets.mask(error.toString()));
      }
      return INVALID_POLICY;
    } catch (Exception e) {
      log.error("cannot start: " + describe(e));
      return FAILED;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook = new Thread(() -> {
      server.close();
      stopped.countDown();
    }, "sluice-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.close();
    }
    return OK;
  }

  /** A start-up failure as a person reads it; listeners' already name flag, address and cause. */
  static String describe(Throwable e) {
    String m = e.getMessage();
    return m == null ? e.getClass().getSimpleName() : m;
  }
}
