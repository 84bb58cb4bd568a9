package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line, run in-process with captured output. */
class MainTest {

  @TempDir
  Path dir;

  record Run(int code, String out, String err) {}

  static Run run(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), env).run(args);
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  Path file(String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  @Test
  void check_validFile_printsEffectivePolicy_exit0() throws Exception {
    Path p = file("ok.yaml", String.join("\n",
        "rules:",
        "  api:",
        "    limits: [{type: sliding-window, limit: '${API_LIMIT:-60}', window: 1m}]",
        "routes:",
        "  - {name: api, paths: [/api/**], rules: [api]}",
        ""));
    Run r = run(Map.of("API_LIMIT", "90"), "check", "--config", p.toString());
    assertThat(r.code()).isEqualTo(0);
    assertThat(r.out()).startsWith("# effective policy of " + p)
        .contains("    - type: sliding-window\n      name: api\n      limit: 90\n      window: 1m\n");
    // Issue 13: it said "1 rules, 1 routes".
    assertThat(r.err()).isEqualTo(p + ": valid (1 rule, 1 route, global [])\n");
  }

  @Test
  void check_brokenFile_listsEveryError_exit2() throws Exception {
    Path p = file("broken.yaml", String.join("\n",
        "rules:",
        "  api:",
        "    limits:",
        "      - type: token-bucket",
        "        burst: -5",
        "        refill: 10",
        "        period: 60",
        "routes:",
        "  - name: api",
        "    paths: [/api/**]",
        "    rulez: [api]",
        ""));
    Run r = run(Map.of(), "check", "--config", p.toString());
    assertThat(r.code()).isEqualTo(Main.INVALID_POLICY).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo(p + ": invalid policy, 3 errors:\n"
        + "  " + p + ":5: rules.api.limits[0].burst : -5 (expected: a whole number > 0)\n"
        + "  " + p + ":7: rules.api.limits[0].period : 60 (expected: a duration like 500ms, 60s, "
        + "1.5s, 10m, 1h or 1d)\n"
        + "  " + p + ":11: routes[0].rulez : unknown key (expected: did you mean 'rules'? one of "
        + "name, methods, paths, websocket, hosts, headers, from, caseInsensitive, humanCheck, "
        + "rules, exempt, cost)\n");
  }

  @Test
  void check_positionalFile_andYamlSyntaxError() throws Exception {
    Path p = file("syntax.yaml", "rules:\n  a: {limits: [\n");
    Run r = run(Map.of(), "check", p.toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains(p + ":3: (yaml) : ");
  }

  @Test
  void check_missingFile_exit2() {
    Run r = run(Map.of(), "check", "--config", dir.resolve("nope.yaml").toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("nope.yaml:1: (file) : cannot be read: no such file");
  }

  @Test
  void check_default_withBadEnv_warnsOnceAndIsValid() {
    Run r = run(Map.of("LIMIT_ANALYSIS_BURST", "fifteen"), "check");
    assertThat(r.code()).isEqualTo(0);
    assertThat(r.err()).startsWith("warning: LIMIT_ANALYSIS_BURST=\"fifteen\" is not valid for "
        + "rules.analysis.limits[0].burst (expected: a whole number > 0); using the default 15\n");
    assertThat(r.err().lines().filter(l -> l.startsWith("warning:")).count()).isEqualTo(1);
    assertThat(r.out()).contains("      burst: 15\n");
  }

  @Test
  void help_andVersion() {
    Run help = run(Map.of(), "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).startsWith("Usage: sluice [serve]").contains("LIMIT_ANALYSIS_BURST")
        .contains("SLUICE_LOG_LEVEL").contains("  check     validate a policy file");
    assertThat(run(Map.of(), "help").out()).isEqualTo(help.out());
    Run version = run(Map.of(), "--version");
    assertThat(version.code()).isZero();
    assertThat(version.out()).startsWith("sluice ");
  }

  /** Issue 13: check --help, serve --help and help check printed the global help. */
  @Test
  void issue13_eachSubcommandsHelp_isItsOwn() {
    Run check = run(Map.of(), "check", "--help");
    assertThat(check.code()).isZero();
    assertThat(check.out()).startsWith("Usage: sluice check [--config FILE] [FILE]\n")
        .contains("validate a policy file").contains("  --help")
        .doesNotContain("--listen").doesNotContain("Commands:");
    assertThat(run(Map.of(), "help", "check").out()).isEqualTo(check.out());
    assertThat(run(Map.of(), "check", "-h").out()).isEqualTo(check.out());

    Run serve = run(Map.of(), "serve", "--help");
    assertThat(serve.out()).startsWith("Usage: sluice [serve] [--config FILE] [--listen HOST:PORT]")
        .contains("  --log-format FORMAT   text (default) or json")
        .contains("  --io-threads N").contains("SLUICE_STORE").doesNotContain("--surface")
        .doesNotContain("Commands:");
    assertThat(run(Map.of(), "help", "serve").out()).isEqualTo(serve.out());

    Run moderate = run(Map.of(), "moderate", "--help");
    assertThat(moderate.out()).startsWith("Usage: sluice moderate [--lists DIR] "
        + "[--surface SURFACE] [--] TEXT...\n").doesNotContain("--listen");
    // After a lone --, --help is a text to check, not a request for help.
    Run text = run(Map.of(), "moderate", "--", "--help");
    assertThat(text.out()).startsWith("\"--help\" allowed");
  }

  /** Issue 13: a bad flag printed the whole usage after the error. */
  @Test
  void issue13_badFlag_isOneLineNamingIt_withAHint() {
    Run serve = run(Map.of(), "serve", "--foo");
    assertThat(serve.code()).isEqualTo(Main.USAGE);
    assertThat(serve.err())
        .isEqualTo("sluice: unknown option --foo for serve (see sluice serve --help)\n");
    assertThat(run(Map.of(), "--foo").err())
        .isEqualTo("sluice: unknown option --foo for serve (see sluice serve --help)\n");
    assertThat(run(Map.of(), "check", "--listen", ":0").err())
        .isEqualTo("sluice: unknown option --listen for check (see sluice check --help)\n");
    Run moderate = run(Map.of(), "moderate", "--lists=x", "--colour", "red", "x");
    assertThat(moderate.code()).isEqualTo(Main.INVALID_POLICY);
    assertThat(moderate.err())
        .isEqualTo("sluice: unknown option --colour for moderate (see sluice moderate --help)\n");
    assertThat(run(Map.of(), "help", "launch").err()).isEqualTo(
        "sluice: unknown command 'launch' (expected: serve, check, moderate, admin, replay or "
            + "import) (see sluice --help)\n");
    Run admin = run(Map.of(), "admin", "--colour", "red", "bans");
    assertThat(admin.err()).isEqualTo(
        "sluice admin: unknown option --colour for admin (see sluice admin --help)\n");
    assertThat(run(Map.of(), "admin", "--help").out()).startsWith("Usage: sluice admin")
        .contains("--token-file FILE", "unban RULE KEY");
  }

  @Test
  void usageErrors_exit64() {
    Run unknownCommand = run(Map.of(), "launch");
    assertThat(unknownCommand.code()).isEqualTo(Main.USAGE).isEqualTo(64);
    assertThat(unknownCommand.err()).isEqualTo(
        "sluice: unknown command 'launch' (expected: serve, check, moderate, admin, replay or "
            + "import) (see sluice --help)\n");
    assertThat(run(Map.of(), "serve", "--io-threads", "0").err()).isEqualTo(
        "sluice: --io-threads : \"0\" (expected: 1..1024)\n");
    assertThat(run(Map.of(), "serve", "--dry-run=yes").err()).isEqualTo(
        "sluice: --dry-run takes no value (see sluice serve --help)\n");
    assertThat(run(Map.of(), "serve", "--io-threads", "many").err()).startsWith(
        "sluice: --io-threads : \"many\" (expected: 1..1024)");
    assertThat(run(Map.of(), "serve", "--listen").err()).isEqualTo(
        "sluice: --listen needs a value (see sluice serve --help)\n");
    assertThat(run(Map.of(), "serve", "--listen", "localhost:99999").err()).startsWith(
        "sluice: --listen : \"localhost:99999\" (expected: HOST:PORT like 0.0.0.0:8080, port "
            + "0..65535)");
    assertThat(run(Map.of(), "serve", "--upstream", "ftp://x").err()).startsWith(
        "sluice: --upstream : \"ftp://x\" (expected: an http:// or https:// URL");
    assertThat(run(Map.of(), "serve", "--store", "mysql://x").err()).startsWith(
        "sluice: --store : \"mysql://x\" (expected: memory, redis://HOST:PORT");
    assertThat(run(Map.of("SLUICE_STORE", "etcd://x"), "serve").err()).startsWith(
        "sluice: SLUICE_STORE : \"etcd://x\"");
    assertThat(run(Map.of(), "check", "--config", "a", "--config", "b").code()).isEqualTo(64);
    assertThat(run(Map.of(), "serve", "--log-level", "loud").err()).isEqualTo(
        "sluice: --log-level : \"loud\" (expected: error, warn, info, debug or trace)\n");
    assertThat(run(Map.of("SLUICE_LOG_FORMAT", "xml"), "serve").err()).isEqualTo(
        "sluice: SLUICE_LOG_FORMAT : \"xml\" (expected: text or json)\n");
  }

  @Test
  void usageError_neverPrintsAPassword() {
    Run r = run(Map.of(), "serve", "--store", "mysql://app:s3cret@db:3306");
    assertThat(r.code()).isEqualTo(64);
    assertThat(r.err()).contains("mysql://app:***@db:3306").doesNotContain("s3cret");
  }

  /** Issue 13: a policy with no rules was valid without a word. */
  @Test
  void check_policyWithoutRules_isValid_withAWarning() throws Exception {
    Path p = file("empty.yaml", "gateway: {maxBodyBytes: 1024}\n");
    Run r = run(Map.of(), "check", p.toString());
    assertThat(r.code()).isZero();
    assertThat(r.err()).isEqualTo("warning: " + p + " has no rules: every request is allowed "
        + "(add a rules: section and routes that use it)\n" + p
        + ": valid (0 rules, 0 routes, global [])\n");
  }

  @Test
  void serve_logFormatJson_writesOneObjectALine() throws Exception {
    Path p = file("bad.yaml", "rules:\n  a: {limits: [{type: fixed-window, limit: 0, window: 1s}]}\n");
    Run r = run(Map.of("SLUICE_LOG_FORMAT", "json"), "serve", "--config", p.toString(),
        "--listen", "127.0.0.1:0", "--admin", "off");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().lines().filter(l -> l.startsWith("{")).toList())
        .anySatisfy(l -> assertThat(l).matches("\\{\"ts\":\"[0-9T:.-]+Z\",\"level\":\"INFO\","
            + "\"msg\":\"sluice starting\",\"version\":\".*\",\"java\":\".*\"}"))
        .anySatisfy(l -> assertThat(l).endsWith(",\"level\":\"ERROR\",\"msg\":\"invalid policy; "
            + "not starting\",\"errors\":1}"));
    // The flag wins over the variable; warn hides the INFO lines.
    Run quiet = run(Map.of("SLUICE_LOG_FORMAT", "json"), "serve", "--log-format", "text",
        "--log-level", "warn", "--config", p.toString(), "--listen", "127.0.0.1:0", "--admin",
        "off");
    assertThat(quiet.err()).doesNotContain("INFO").doesNotContain("{\"ts\"")
        .contains(" ERROR invalid policy; not starting errors=1");
  }

  @Test
  void serve_invalidPolicy_exit2_withoutStarting() throws Exception {
    Path p = file("bad.yaml", "rules:\n  a: {limits: [{type: fixed-window, limit: 0, window: 1s}]}\n");
    Run r = run(Map.of(), "serve", "--config", p.toString(), "--listen", "127.0.0.1:0",
        "--admin", "off");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("ERROR invalid policy; not starting errors=1")
        .contains("  " + p + ":2: rules.a.limits[0].limit : 0 (expected: a whole number > 0)");
  }
  /** Issue 7: "cannot start: address in use or not available", naming neither flag nor address. */
  @Test
  void serve_adminPortInUse_exit1_namingTheFlagTheAddressAndTheCause() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Run r = run(Map.of(), "serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:" + port);
      assertThat(r.code()).isEqualTo(Main.FAILED);
      assertThat(r.err()).contains("ERROR cannot start: --admin 127.0.0.1:" + port
          + ": address already in use");
    }
  }

  @Test
  void serve_listenPortInUse_exit1_namingTheFlagTheAddressAndTheCause() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Run r = run(Map.of(), "serve", "--listen", "127.0.0.1:" + port, "--admin", "off");
      assertThat(r.code()).isEqualTo(Main.FAILED);
      assertThat(r.err()).contains("ERROR cannot start: --listen 127.0.0.1:" + port
          + ": address already in use");
    }
  }

  /** Issue 7: an unresolvable host said only "UnresolvedAddressException". */
  @Test
  void serve_unresolvableListenHost_exit1_namingTheFlagAndTheHost() {
    Run r = run(Map.of(), "serve", "--listen", "nosuchhost.invalid:8085", "--admin", "off");
    assertThat(r.code()).isEqualTo(Main.FAILED);
    assertThat(r.err()).contains("ERROR cannot start: --listen nosuchhost.invalid:8085: cannot "
        + "resolve host nosuchhost.invalid");
  }
}
