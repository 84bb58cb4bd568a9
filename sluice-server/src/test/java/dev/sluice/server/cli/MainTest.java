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
    assertThat(r.err()).isEqualTo(p + ": valid (1 rules, 1 routes, global [])\n");
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
        + "name, methods, paths, websocket, rules, exempt, cost)\n");
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
    assertThat(help.out()).startsWith("Usage: sluice [serve]").contains("LIMIT_ANALYSIS_BURST");
    Run version = run(Map.of(), "--version");
    assertThat(version.code()).isZero();
    assertThat(version.out()).startsWith("sluice ");
    assertThat(run(Map.of(), "check", "--help").out()).startsWith("Usage:");
  }

  @Test
  void usageErrors_exit64() {
    Run unknownCommand = run(Map.of(), "launch");
    assertThat(unknownCommand.code()).isEqualTo(Main.USAGE).isEqualTo(64);
    assertThat(unknownCommand.err()).startsWith(
        "sluice: unknown command 'launch' (expected: serve, check or moderate)\n\nUsage:");
    assertThat(run(Map.of(), "serve", "--port", "8080").err()).startsWith(
        "sluice: unknown option '--port' (expected: one of --config, --listen, --upstream, "
            + "--admin, --store, --io-threads, --rls, --tls-cert, --tls-key, --upstream-ca, "
            + "--upstream-sni)");
    assertThat(run(Map.of(), "serve", "--io-threads", "0").err()).startsWith(
        "sluice: --io-threads : \"0\" (expected: 1..1024)");
    assertThat(run(Map.of(), "serve", "--io-threads", "many").err()).startsWith(
        "sluice: --io-threads : \"many\" (expected: 1..1024)");
    assertThat(run(Map.of(), "serve", "--listen").err()).startsWith(
        "sluice: --listen needs a value");
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
