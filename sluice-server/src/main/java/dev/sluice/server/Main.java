package dev.sluice.server;

import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyFormat;
import dev.sluice.policy.PolicyLoader;
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
 * {@code --help}, {@code --version}.
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

  static final String USAGE_TEXT = String.join("\n",
      "Usage: sluice [serve] [--config FILE] [--listen HOST:PORT] [--upstream URL]",
      "                      [--admin HOST:PORT|off] [--store URI] [--io-threads N]",
      "                      [--rls HOST:PORT] [--tls-cert FILE --tls-key FILE]",
      "                      [--upstream-ca FILE] [--upstream-sni NAME]",
      "       sluice check [--config FILE]",
      "       sluice moderate [--lists DIR] [--surface SURFACE] [--] TEXT...",
      "       sluice --help | --version",
      "",
      "Commands:",
      "  serve   run the rate-limiting gateway (the default command)",
      "  check   validate a policy file and print the effective policy (after environment",
      "          overrides); exit 0 if valid, 2 with every error listed if not",
      "  moderate check names as the gateway would, one line per TEXT; exit 0 if all are",
      "          allowed, 1 if any is refused, 2 if a list file is invalid",
      "",
      "Options:",
      "  --config FILE        policy file (YAML); default: the embedded default policy (seed 000)",
      "  --listen HOST:PORT   gateway address (default 0.0.0.0:8080; port 0 picks a free port;",
      "                       'off' for no gateway, as for a rate limit service alone)",
      "  --rls HOST:PORT      serve Envoy's rate limit service (gRPC, envoy.service.ratelimit.v3)",
      "                       there, answering by the policy's domains: (also rls.listen)",
      "  --upstream URL       the app to proxy to, like http://127.0.0.1:3000; default: a built-in",
      "                       demo upstream that answers 200 with a small JSON body",
      "  --tls-cert FILE      serve TLS with this PEM certificate (chain), HTTP/2 and HTTP/1.1",
      "                       by ALPN; reloaded when it changes and on SIGHUP",
      "  --tls-key FILE       its PEM private key (PKCS#8 or PKCS#1 RSA, unencrypted)",
      "  --upstream-ca FILE   PEM CA certificates trusted for an https:// upstream (default: the",
      "                       JDK's trust store)",
      "  --upstream-sni NAME  the name sent as SNI to an https:// upstream and verified in its",
      "                       certificate (default: the upstream URL's host)",
      "  --admin HOST:PORT    admin listener: /healthz, /livez, /readyz, /metrics, /v1/policy",
      "                       (default 127.0.0.1:9090; 'off' for none)",
      "  --store URI          memory (default), redis://HOST:PORT, rediss://HOST:PORT,",
      "                       redis-cluster://H1:P1,H2:P2; also SLUICE_STORE",
      "  --io-threads N       the gateway's I/O threads (default: twice the cores; no store",
      "                       ever holds one, so more are not needed for Redis)",
      "",
      "Environment (read by the embedded default policy; files read what they name as ${VAR}):",
      "  LIMIT_CONNECT_BURST, LIMIT_CONNECT_RATE     WebSocket connects: 120 burst, 240/min",
      "  LIMIT_READ_BURST, LIMIT_READ_RATE           GET/HEAD /api/**, /records/**: 120, 240/min",
      "  LIMIT_ANALYSIS_BURST, LIMIT_ANALYSIS_RATE   /api/analysis/**: 15, 30/min",
      "  LIMIT_WRITE_BURST, LIMIT_WRITE_RATE         other methods: 30, 60/min",
      "  TRUST_PROXY          trusted proxy hops, counted from the right (default 0: none)",
      "  TRUSTED_PROXIES      trusted proxy networks, comma-separated CIDRs",
      "  RATE_LIMIT_MAX       global per-address backstop per window (default 600; 0: off)",
      "  RATE_LIMIT_WINDOW_MS the backstop's window (default 60000)",
      "  SLUICE_STORE         the store URI, like --store",
      "",
      "Reload a policy file by saving it or with SIGHUP; an invalid file is rejected and the",
      "running policy keeps serving. Docs: docs/CONFIG.md.",
      "");

  private final PrintStream out;
  private final PrintStream err;
  private final Map<String, String> env;

  public Main(PrintStream out, PrintStream err, Map<String, String> env) {
    this.out = out;
    this.err = err;
    this.env = env;
  }

  public static void main(String[] args) {
    System.setProperty("java.util.logging.SimpleFormatter.format",
        "%1$tFT%1$tT.%1$tLZ %4$-5s %5$s%6$s%n");
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
    String command = "serve";
    if (!rest.isEmpty() && !rest.get(0).startsWith("-")) {
      command = rest.remove(0);
    }
    if (rest.contains("--help") || rest.contains("-h") || command.equals("help")) {
      out.print(USAGE_TEXT);
      return OK;
    }
    if (rest.contains("--version") || rest.contains("-V") || command.equals("version")) {
      out.println("sluice " + Version.get());
      return OK;
    }
    try {
      switch (command) {
        case "serve":
          return serve(parseServe(rest, env));
        case "check":
          return check(parseCheck(rest));
        case "moderate":
          try {
            return new ModerateCommand(out, err).run(rest);
          } catch (UsageException e) {
            // Issue 12: a list-testing tool's bad usage is exit 2, like its bad lists.
            err.println("sluice: " + e.getMessage());
            return INVALID_POLICY;
          }
        default:
          throw new UsageException("unknown command '" + command
              + "' (expected: serve, check or moderate)");
      }
    } catch (UsageException e) {
      err.println("sluice: " + e.getMessage());
      err.println();
      err.print(USAGE_TEXT);
      return USAGE;
    }
  }

  static Map<String, String> options(List<String> args, List<String> allowed)
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
        throw new UsageException("unexpected argument '" + arg + "'");
      }
      if (!allowed.contains(name)) {
        throw new UsageException("unknown option '" + name + "' (expected: one of "
            + String.join(", ", allowed) + ")");
      }
      if (value == null) {
        if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
          throw new UsageException(name + " needs a value");
        }
        value = args.get(++i);
      }
      if (options.put(name, value) != null) {
        throw new UsageException(name + " given twice");
      }
    }
    return options;
  }

  static ServeOptions parseServe(List<String> args, Map<String, String> env)
      throws UsageException {
    Map<String, String> o = options(args,
        List.of("--config", "--listen", "--upstream", "--admin", "--store", "--io-threads",
            "--rls", "--tls-cert", "--tls-key", "--upstream-ca", "--upstream-sni"));
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
        throw new UsageException("--store : \"" + o.get("--store") + "\" (expected: "
            + e.getMessage() + ")");
      }
    } else if (env.get("SLUICE_STORE") != null && !env.get("SLUICE_STORE").isBlank()) {
      try {
        store = PolicyLoader.storeUri(env.get("SLUICE_STORE"));
      } catch (IllegalArgumentException e) {
        throw new UsageException("SLUICE_STORE : \"" + env.get("SLUICE_STORE")
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
    return new ServeOptions(config, listen, upstream, admin, store, Duration.ofSeconds(1),
        ioThreads, rls, tls(o, upstream));
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
    Map<String, String> o = options(rest, List.of("--config"));
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
      loaded = file == null ? PolicyLoader.loadDefault(env) : PolicyLoader.load(file, env);
    } catch (ConfigException e) {
      e.warnings().forEach(w -> err.println("warning: " + w));
      List<ConfigError> errors = e.errors();
      err.println((file == null ? PolicyLoader.DEFAULT_NAME : file) + ": invalid policy, "
          + errors.size() + (errors.size() == 1 ? " error:" : " errors:"));
      for (ConfigError error : errors) {
        err.println("  " + error);
      }
      return INVALID_POLICY;
    }
    loaded.warnings().forEach(w -> err.println("warning: " + w));
    out.println("# effective policy of " + loaded.sourceName()
        + " (environment applied, defaults filled in)");
    out.print(PolicyFormat.toYaml(loaded.effective()));
    err.println(loaded.sourceName() + ": valid (" + loaded.summary() + ")");
    return OK;
  }

  private int serve(ServeOptions options) {
    Log log = new Log(err);
    SluiceServer server;
    try {
      server = SluiceServer.start(options, env, log);
    } catch (ConfigException e) {
      log.error("invalid policy; not starting", "errors", e.errors().size());
      for (ConfigError error : e.errors()) {
        err.println("  " + error);
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
