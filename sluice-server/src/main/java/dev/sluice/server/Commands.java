package dev.sluice.server;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line's one table: every subcommand with its flags and help, and the environment
 * variables. The global help, each {@code sluice COMMAND --help}, the synopsis and the set of
 * flags a command accepts are all printed or read from here, so a new flag or subcommand is one
 * entry.
 */
final class Commands {

  /**
   * A flag: {@code --name VALUE}, explained by {@code help} (one line each); a switch (no value)
   * has an empty {@code value}.
   */
  record Flag(String name, String value, List<String> help) {
    Flag(String name, String value, String... help) {
      this(name, value, List.of(help));
    }

    boolean isSwitch() {
      return value.isEmpty();
    }

    String synopsis() {
      return isSwitch() ? name : name + " " + value;
    }
  }

  /**
   * A subcommand: its name, what follows its flags in the synopsis ({@code [FILE]},
   * {@code [--] TEXT...}), one line of summary, its flags, and paragraphs for its own help.
   */
  record Command(String name, String operands, List<String> summary, List<Flag> flags,
      List<String> notes) {

    boolean accepts(String flag) {
      return flags.stream().anyMatch(f -> f.name().equals(flag));
    }

    List<String> flagNames() {
      return flags.stream().map(Flag::name).toList();
    }

    boolean isSwitch(String flag) {
      return flags.stream().anyMatch(f -> f.name().equals(flag) && f.isSwitch());
    }
  }

  /** An environment variable with its help lines. */
  record Variable(String name, List<String> help) {
    Variable(String name, String... help) {
      this(name, List.of(help));
    }
  }

  static final Command SERVE = new Command("serve", "",
      List.of("run the rate-limiting gateway (the default command)"),
      List.of(
          new Flag("--config", "FILE", "policy file (YAML); default: the embedded default policy "
              + "(seed 000)"),
          new Flag("--listen", "HOST:PORT", "gateway address (default 0.0.0.0:8080; port 0 picks "
              + "a free port;", "'off' for no gateway, as for a rate limit service alone)"),
          new Flag("--rls", "HOST:PORT", "serve Envoy's rate limit service (gRPC, "
              + "envoy.service.ratelimit.v3)", "there, answering by the policy's domains: (also "
              + "rls.listen)"),
          new Flag("--check-api", "HOST:PORT|admin|off", "serve the decision API (POST "
              + "/v1/check) on a listener of its own", "(a bare PORT binds 127.0.0.1) or on the "
              + "admin listener, behind its token;", "default off (also rls.checkApi; 'gateway' "
              + "puts it on the public port: see docs)"),
          new Flag("--upstream", "URL", "the app to proxy to, like http://127.0.0.1:3000; "
              + "default: a built-in", "demo upstream that answers 200 with a small JSON body"),
          new Flag("--tls-cert", "FILE", "serve TLS with this PEM certificate (chain), HTTP/2 "
              + "and HTTP/1.1", "by ALPN; reloaded when it changes and on SIGHUP"),
          new Flag("--tls-key", "FILE", "its PEM private key (PKCS#8 or PKCS#1 RSA, "
              + "unencrypted)"),
          new Flag("--upstream-ca", "FILE", "PEM CA certificates trusted for an https:// "
              + "upstream (default:", "the JDK's trust store)"),
          new Flag("--upstream-sni", "NAME", "the name sent as SNI to an https:// upstream and "
              + "verified in", "its certificate (default: the upstream URL's host)"),
          new Flag("--dry-run", "", "run every rule in shadow mode: decide, count, log, never "
              + "refuse", "(also the policy's mode: shadow)"),
          new Flag("--admin", "HOST:PORT|off", "admin listener: the console at / (in a "
              + "browser), /healthz, /livez,", "/readyz, /metrics, /v1/... (default "
              + "127.0.0.1:9090; 'off' for none)"),
          new Flag("--admin-token-file", "FILE", "the admin token: every state change needs it, "
              + "and with this flag", "every /v1/ read too (default: a token generated at first "
              + "start", "in ~/.local/state/sluice/admin-token); also SLUICE_ADMIN_TOKEN_FILE"),
          new Flag("--admin-hosts", "NAMES", "names the admin listener answers to besides its "
              + "address and", "localhost, comma-separated (else 421); also SLUICE_ADMIN_HOSTS"),
          new Flag("--admin-head-timeout", "DURATION", "time for a request head on the admin "
              + "listener (default 10s)"),
          new Flag("--admin-body-timeout", "DURATION", "time for a request body on the admin "
              + "listener (default 10s)"),
          new Flag("--admin-idle-timeout", "DURATION", "time an admin connection may wait for "
              + "its next request or", "take an answer (default 1m)"),
          new Flag("--admin-max-connections", "N", "admin connections open at once (default "
              + "128); past it the one", "waiting longest for a head or a body is closed"),
          new Flag("--store", "URI", "memory (default), redis://HOST:PORT, rediss://HOST:PORT,",
              "redis-cluster://H1:P1,H2:P2; also SLUICE_STORE"),
          new Flag("--io-threads", "N", "the gateway's I/O threads (default: one per core; "
              + "no store", "ever holds one, so more are not needed for Redis)"),
          new Flag("--log-level", "LEVEL", "error, warn, info (default), debug or trace; also "
              + "SLUICE_LOG_LEVEL"),
          new Flag("--log-format", "FORMAT", "text (default) or json (one object a line); also "
              + "SLUICE_LOG_FORMAT")),
      List.of("Reload a policy file by saving it or with SIGHUP; an invalid file is rejected and "
          + "the", "running policy keeps serving. Docs: docs/CONFIG.md."));

  static final Command CHECK = new Command("check", "[FILE]",
      List.of("validate a policy file and print the effective policy (after environment",
          "overrides); exit 0 if valid, 2 with every error listed if not"),
      List.of(new Flag("--config", "FILE", "the policy file (or give it as FILE); default: the "
          + "embedded default")),
      List.of("The effective policy goes to standard output, warnings and the verdict",
          "(\"valid (1 rule, 1 route, ...)\") to standard error."));

  static final Command MODERATE = new Command("moderate", "[--] TEXT...",
      List.of("check names as the gateway would, one line per TEXT; exit 0 if all are",
          "allowed, 1 if any is refused, 2 if a list file or the command line is invalid"),
      List.of(
          new Flag("--lists", "DIR", "block, reserved and allow lists (default: the built-in "
              + "lists)"),
          new Flag("--surface", "SURFACE", "username, display-name (default), room-name or "
              + "reaction")),
      List.of("Texts that start with -- follow a lone --: sluice moderate -- --admin--"));

  static final Command ADMIN = new Command("admin",
      "bans [RULE] | refused RULE | show RULE KEY | ban RULE KEY DURATION | unban RULE KEY | "
          + "reset RULE KEY",
      List.of("ask a running server's admin listener: list bans or a rule's refused keys,",
          "show a key, ban a key by hand, lift a ban, reset a key; exit 0 done, 1 not found,",
          "2 usage or input",
          "refused, 3 server or store unreachable"),
      List.of(
          new Flag("--admin", "HOST:PORT", "the server's admin listener (default 127.0.0.1:9090;"
              + " also", "SLUICE_ADMIN)"),
          new Flag("--token-file", "FILE", "send the bearer token in FILE (also "
              + "SLUICE_ADMIN_TOKEN_FILE; default:", "the token a server here generated, "
              + "~/.local/state/sluice/admin-token)"),
          new Flag("--actor", "NAME", "who is asking, for the server's log (default: $USER)"),
          new Flag("--json", "", "print the server's JSON instead of a table"),
          new Flag("--limit", "N", "at most N keys in a listing, 1 to 1000 (default 100)"),
          new Flag("--keep-state", "", "unban only: lift the ban but keep the limits as spent "
              + "(by default", "the key is reset too, so its next request is decided afresh)")),
      List.of("Commands:",
          "  bans [RULE]          banned keys (of every rule with a ban, or of RULE), most "
              + "recently",
          "                       refused first",
          "  refused RULE         keys of RULE refusing now, most recently refused first",
          "  show RULE KEY        a key's state: ban, and per limit what is left and when it is "
              + "full",
          "  ban RULE KEY DURATION  ban a key for DURATION (like 10m or 1h) by hand; RULE must "
              + "have",
          "                       a ban:, and the key's limits stay as they are",
          "  unban RULE KEY       lift a key's ban and reset its state (--keep-state: the "
              + "limits",
          "                       stay as spent, so the next refusal may ban it again)",
          "  reset RULE KEY       forget a key's state: a full limit and no ban",
          "",
          "KEY is the key as listed and as the ban log line prints it: the rule's dimension",
          "values joined by ':', such as 203.0.113.7 or user-42:203.0.113.7."));

  static final Command REPLAY = new Command("replay", "LOG...",
      List.of("run access logs through a policy with the real engine, on the logs' clock, and",
          "show whom it would have refused; exit 0 done, 1 a log could not be read, 2 an",
          "invalid policy"),
      List.of(
          new Flag("--config", "FILE", "the policy to try (default: the embedded default, "
              + "seed 000)"),
          new Flag("--compare", "FILE", "a second policy, decided on the same lines: who is "
              + "refused by one", "and not the other"),
          new Flag("--format", "FORMAT", "auto (default: from each log's first line), combined, "
              + "common, json", "(Sluice's), envoy, 'nginx:LOG_FORMAT', 'envoy:FORMAT', or",
              "'json:time=KEY,client=KEY,path=KEY,...'"),
          new Flag("--json", "", "print the result as JSON instead of the summary"),
          new Flag("--report", "FILE", "also write a self-contained HTML report with charts"),
          new Flag("--suggest", "SHARE", "per rule, the limit that would have refused at most "
              + "SHARE of", "its clients (0.1% or 0.001), from their peaks within its window"),
          new Flag("--threads", "N", "split the clients into N partitions replayed in "
              + "parallel (default 1;", "every rule must be keyed by ip)"),
          new Flag("--top", "N", "refused clients listed (default 10)"),
          new Flag("--max-clients", "N", "clients counted at once (default: the policy's "
              + "store.maxKeys)"),
          new Flag("--quiet", "", "no progress line on standard error"),
          new Flag("--verdicts", "FILE", "also write each line's verdict there: LINE, outcome, "
              + "rule, route", "(tab-separated, in the log's order; --threads 1)")),
      List.of("LOG is a file (gzip is read as such) or - for standard input; several are merged",
          "by time. Lines that do not parse are counted and the first few shown. The store is",
          "always the in-memory one with the policy's key cap. Docs: docs/REPLAY.md."));

  static final Command IMPORT = new Command("import", "FILE",
      List.of("translate an nginx configuration, ingress-nginx annotations (an Ingress YAML),",
          "an envoyproxy/ratelimit file or Kong's rate-limiting plugin into a policy file;",
          "exit 0 all translated, 2 written but some directives not translated (each named)"),
      List.of(
          new Flag("--from", "FORMAT", "nginx, ingress-nginx, envoy or kong (default: from the "
              + "file's content)"),
          new Flag("--out", "FILE", "write the policy there (default: standard output)")),
      List.of("Every line whose meaning differs carries a 'differs:' comment. FILE may be - "
          + "for", "standard input. Docs: docs/MIGRATING.md."));

  /** Every subcommand, in the order the help lists them. */
  static final List<Command> ALL = List.of(SERVE, CHECK, MODERATE, ADMIN, REPLAY, IMPORT);

  static final List<Variable> ENVIRONMENT = List.of(
      new Variable("LIMIT_CONNECT_BURST, LIMIT_CONNECT_RATE", "WebSocket connects: 120 burst, "
          + "240/min"),
      new Variable("LIMIT_READ_BURST, LIMIT_READ_RATE", "GET/HEAD /api/**, /records/**: 120, "
          + "240/min"),
      new Variable("LIMIT_ANALYSIS_BURST, LIMIT_ANALYSIS_RATE", "/api/analysis/**: 15, 30/min"),
      new Variable("LIMIT_WRITE_BURST, LIMIT_WRITE_RATE", "other methods: 30, 60/min"),
      new Variable("TRUST_PROXY", "trusted proxy hops, counted from the right (default 0: none)"),
      new Variable("TRUSTED_PROXIES", "trusted proxy networks, comma-separated CIDRs"),
      new Variable("RATE_LIMIT_MAX", "global per-address backstop per window (default 600; 0: "
          + "off)"),
      new Variable("RATE_LIMIT_WINDOW_MS", "the backstop's window (default 60000)"),
      new Variable("SLUICE_STORE", "the store URI, like --store"),
      new Variable("SLUICE_LOG_LEVEL", "like --log-level (the flag wins)"),
      new Variable("SLUICE_LOG_FORMAT", "like --log-format (the flag wins)"));

  private Commands() {}

  /** The subcommand named {@code name}, or null. */
  static Command find(String name) {
    return ALL.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
  }

  static String names() {
    List<String> n = ALL.stream().map(Command::name).toList();
    return String.join(", ", n.subList(0, n.size() - 1)) + " or " + n.get(n.size() - 1);
  }

  /** The hint every usage error ends with. */
  static String hint(Command c) {
    return "(see sluice " + (c == null ? "" : c.name() + " ") + "--help)";
  }

  /** {@code sluice --help}: every command's synopsis, serve's flags, the environment. */
  static String usage() {
    StringBuilder sb = new StringBuilder();
    String lead = "Usage: ";
    for (Command c : ALL) {
      synopsis(sb, lead, c, c == SERVE ? "sluice [serve]" : "sluice " + c.name());
      lead = "       ";
    }
    sb.append(lead).append("sluice help [COMMAND] | COMMAND --help | --version\n\n");
    sb.append("Commands:\n");
    for (Command c : ALL) {
      rows(sb, c.name(), c.summary(), 12);
    }
    rows(sb, "help", List.of("this help, or a command's: sluice help check (or sluice check "
        + "--help)"), 12);
    sb.append("\nOptions of serve:\n");
    flags(sb, SERVE);
    environment(sb);
    sb.append('\n');
    SERVE.notes().forEach(l -> sb.append(l).append('\n'));
    return sb.toString();
  }

  /** {@code sluice COMMAND --help}. */
  static String help(Command c) {
    StringBuilder sb = new StringBuilder();
    synopsis(sb, "Usage: ", c, c == SERVE ? "sluice [serve]" : "sluice " + c.name());
    sb.append('\n');
    c.summary().forEach(l -> sb.append(l).append('\n'));
    sb.append("\nOptions:\n");
    flags(sb, c);
    rows(sb, "--help", List.of("this help"), 24);
    if (c == SERVE) {
      environment(sb);
    }
    if (!c.notes().isEmpty()) {
      sb.append('\n');
      c.notes().forEach(l -> sb.append(l).append('\n'));
    }
    return sb.toString();
  }

  private static void synopsis(StringBuilder sb, String lead, Command c, String start) {
    List<String> parts = new ArrayList<>();
    c.flags().forEach(f -> parts.add("[" + f.synopsis() + "]"));
    if (!c.operands().isEmpty()) {
      parts.add(c.operands());
    }
    StringBuilder line = new StringBuilder(lead).append(start);
    String indent = " ".repeat(lead.length() + start.length());
    for (String p : parts) {
      if (line.length() + 1 + p.length() > 96) {
        sb.append(line).append('\n');
        line = new StringBuilder(indent);
      }
      line.append(' ').append(p);
    }
    sb.append(line).append('\n');
  }

  private static void flags(StringBuilder sb, Command c) {
    for (Flag f : c.flags()) {
      rows(sb, f.synopsis(), f.help(), 24);
    }
  }

  private static void environment(StringBuilder sb) {
    sb.append("\nEnvironment (read by the embedded default policy and the server; policy files "
        + "read\nwhat they name as ${VAR}):\n");
    for (Variable v : ENVIRONMENT) {
      rows(sb, v.name(), v.help(), 45);
    }
  }

  /** {@code name} in a column of {@code width}, then the first help line; later lines aligned. */
  private static void rows(StringBuilder sb, String name, List<String> help, int width) {
    String head = "  " + name;
    String pad = " ".repeat(width);
    for (int i = 0; i < help.size(); i++) {
      if (i == 0) {
        sb.append(head.length() < width ? head + " ".repeat(width - head.length())
            : head + "\n" + pad);
      } else {
        sb.append(pad);
      }
      sb.append(help.get(i)).append('\n');
    }
  }
}
