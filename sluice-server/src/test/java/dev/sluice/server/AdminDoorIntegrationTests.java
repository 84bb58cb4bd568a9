package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin listener's door on a whole {@code sluice serve}, as issue 30 found it open: the
 * token generated at first start (owner-only, logged, kept across restarts, found by
 * {@code sluice admin}), a mutation without it, a foreign {@code Host}, the probe port under a
 * slowloris, and the flags that set the door and the limits.
 */
class AdminDoorIntegrationTests {

  static final String POLICY = String.join("\n",
      "rules:",
      "  login:",
      "    key: ip",
      "    limits: [{type: token-bucket, burst: 2, refill: 1, period: 10s}]",
      "    ban: 10m",
      "routes:",
      "  - {name: login, paths: [/login/**], rules: [login]}",
      "");

  @TempDir
  Path dir;

  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  final Closer open = new Closer();
  final ByteArrayOutputStream log = new ByteArrayOutputStream();

  @AfterEach
  void stop() throws Exception {
    open.close();
  }

  /** {@code sluice serve} with its state under {@code state} (XDG_STATE_HOME). */
  SluiceServer serve(Path state, String... extra) throws Exception {
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, POLICY);
    List<String> args = new ArrayList<>(List.of("--listen", "127.0.0.1:0", "--admin",
        "127.0.0.1:0", "--config", policy.toString()));
    args.addAll(List.of(extra));
    Map<String, String> env = Map.of("XDG_STATE_HOME", state.toString());
    return open.add(SluiceServer.start(Main.parseServe(args, env), env,
        new Log(new PrintStream(log, true, StandardCharsets.UTF_8))));
  }

  HttpResponse<String> admin(SluiceServer s, String method, String path, String... headers)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + s.adminPort() + path)).timeout(Duration.ofSeconds(10))
        .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  record Run(int code, String out, String err) {}

  Run sluice(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), env).run(args);
    return new Run(code, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  /** One request on a connection of its own, raw: the whole answer. */
  static String raw(int port, String request) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);   // a failure detector: a listener that hangs fails the test
      s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    }
  }

  @Test
  void aGeneratedToken_isOwnerOnly_logged_keptAcrossRestarts_andSluiceAdminFindsIt()
      throws Exception {
    Path state = dir.resolve("state");
    SluiceServer first = serve(state);
    Path token = state.resolve("sluice/admin-token");
    assertThat(first.adminTokenFile()).isEqualTo(token);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token)))
        .isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token.getParent())))
        .isEqualTo("rwx------");
    String secret = Files.readString(token).strip();
    assertThat(secret).matches("[A-Za-z0-9_-]{43}");
    assertThat(log.toString(StandardCharsets.UTF_8))
        .contains("admin token generated file=" + token)
        .contains("auth=\"bearer token from " + token + " on state changes\"")
        .doesNotContain(secret);

    // A mutation without it: refused, nothing changed; reads stay open on loopback.
    HttpResponse<String> ban = admin(first, "POST", "/v1/bans/login/203.0.113.9?duration=10m");
    assertThat(ban.statusCode()).isEqualTo(401);
    assertThat(ban.body()).contains("every state change needs it");
    assertThat(admin(first, "GET", "/v1/keys/login/203.0.113.9").body())
        .contains("\"banned\":false");

    Map<String, String> env = Map.of("XDG_STATE_HOME", state.toString(), "USER", "dave");
    String at = "127.0.0.1:" + first.adminPort();
    Run banned = sluice(env, "admin", "--admin", at, "ban", "login", "203.0.113.9", "10m");
    assertThat(banned.code()).as(banned.err()).isZero();
    assertThat(sluice(env, "admin", "--admin", at, "bans").out()).contains("203.0.113.9");
    Run lifted = sluice(env, "admin", "--admin", at, "unban", "login", "203.0.113.9");
    assertThat(lifted.code()).as(lifted.err()).isZero();
    assertThat(log.toString(StandardCharsets.UTF_8)).containsPattern("admin unban rule=login "
        + "key=203\\.0\\.113\\.9 outcome=lifted status=200 peer=127\\.0\\.0\\.1 "
        + "auth=token:[0-9a-f]{8} actor=dave");

    Run elsewhere = sluice(Map.of("XDG_STATE_HOME", dir.resolve("other").toString()), "admin",
        "--admin", at, "unban", "login", "203.0.113.9");
    assertThat(elsewhere.code()).as("no token found: the server's 401, a usage error")
        .isEqualTo(2);
    assertThat(elsewhere.err()).contains("unauthorized").contains("--token-file");

    first.close();
    log.reset();
    SluiceServer second = serve(state);
    assertThat(Files.readString(token).strip()).as("the same token after a restart")
        .isEqualTo(secret);
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("admin token file=" + token)
        .doesNotContain("admin token generated");
    assertThat(admin(second, "POST", "/v1/keys/login/203.0.113.9/reset", "Authorization",
        "Bearer " + secret).statusCode()).isEqualTo(200);
  }

  @Test
  void noPlaceForAToken_theServerStarts_andRefusesEveryStateChange() throws Exception {
    Path notADirectory = dir.resolve("file");
    Files.writeString(notADirectory, "x");
    SluiceServer s = serve(notADirectory);
    assertThat(s.adminTokenFile()).isNull();
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("WARN  no admin token: state "
        + "changes on the admin API are refused; give --admin-token-file");
    HttpResponse<String> reset = admin(s, "POST", "/v1/keys/login/1.2.3.4/reset",
        "Authorization", "Bearer anything-at-all-0123456789");
    assertThat(reset.statusCode()).isEqualTo(403);
    assertThat(reset.body()).contains("--admin-token-file");
    assertThat(admin(s, "GET", "/healthz").statusCode()).isEqualTo(200);
    assertThat(admin(s, "GET", "/v1/bans").statusCode()).isEqualTo(200);
  }

  @Test
  void aTokenPlaceOthersMayWrite_isNotTrusted_stateChangesRefused() throws Exception {
    Path state = dir.resolve("shared");
    Path sluiceDir = Files.createDirectories(state.resolve("sluice"));
    Files.setPosixFilePermissions(sluiceDir, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.writeString(sluiceDir.resolve("admin-token"), "planted-by-someone-else-0123\n");
    SluiceServer s = serve(state);
    assertThat(s.adminTokenFile()).isNull();
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("no admin token")
        .contains("may be written by others (rwxrwxrwx)");
    assertThat(admin(s, "POST", "/v1/keys/login/1.2.3.4/reset", "Authorization",
        "Bearer planted-by-someone-else-0123").statusCode()).isEqualTo(403);
  }

  @Test
  void aForeignHost_isRefused_everywhereButTheProbes_andAGivenNameIsAnswered()
      throws Exception {
    SluiceServer s = serve(dir.resolve("state"), "--admin-hosts", "Sluice-Admin.internal");
    int port = s.adminPort();
    for (String path : List.of("/v1/bans", "/v1/policy", "/metrics", "/", "/console/auth",
        "/v1/console/events")) {
      String answer = raw(port, "GET " + path + " HTTP/1.1\r\nHost: attacker.example\r\n"
          + "Connection: close\r\n\r\n");
      assertThat(answer).as(path).startsWith("HTTP/1.1 421 Misdirected Request")
          .contains("is not a name of this admin listener");
    }
    for (String path : List.of("/healthz", "/livez", "/readyz")) {
      assertThat(raw(port, "GET " + path + " HTTP/1.1\r\nHost: attacker.example\r\n"
          + "Connection: close\r\n\r\n")).as(path).startsWith("HTTP/1.1 200 OK");
    }
    assertThat(raw(port, "GET /v1/bans HTTP/1.1\r\nHost: sluice-admin.internal:9090\r\n"
        + "Connection: close\r\n\r\n")).startsWith("HTTP/1.1 200 OK");
    assertThat(raw(port, "GET /v1/bans HTTP/1.1\r\nHost: localhost\r\n"
        + "Connection: close\r\n\r\n")).startsWith("HTTP/1.1 200 OK");
  }

  /** Issue 30, item 6: two connections sent half a head each and the listener answered no one. */
  @Test
  void issue30_twoStalledHeads_neitherProbesNorMetricsNorTheApiWait() throws Exception {
    SluiceServer s = serve(dir.resolve("state"));
    String secret = Files.readString(s.adminTokenFile()).strip();
    List<Socket> stalled = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Socket slow = open.add(new Socket("127.0.0.1", s.adminPort()));
      slow.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      stalled.add(slow);
    }
    assertThat(admin(s, "GET", "/healthz").statusCode()).isEqualTo(200);
    assertThat(admin(s, "GET", "/readyz").statusCode()).isEqualTo(200);
    assertThat(admin(s, "GET", "/metrics").body()).contains("sluice_decisions_total");
    assertThat(admin(s, "GET", "/v1/bans").statusCode()).isEqualTo(200);
    assertThat(admin(s, "POST", "/v1/keys/login/1.2.3.4/reset", "Authorization",
        "Bearer " + secret).statusCode()).isEqualTo(200);
    for (Socket slow : stalled) {
      InputStream in = slow.getInputStream();
      assertThat(slow.isClosed()).isFalse();
      assertThat(in.available()).as("nothing said to a head that never ended").isZero();
    }
  }

  @Test
  void theFlags_badValuesNameTheFlagAndWhatIsExpected() {
    assertThat(sluice(Map.of(), "serve", "--admin-head-timeout", "10").err())
        .contains("--admin-head-timeout : \"10\" (expected: ");
    assertThat(sluice(Map.of(), "serve", "--admin-idle-timeout", "2h").err())
        .contains("--admin-idle-timeout : PT2H (expected: a duration from 100ms to 1h");
    assertThat(sluice(Map.of(), "serve", "--admin-max-connections", "2").err())
        .contains("--admin-max-connections : 2 (expected: 8 to 65536)");
    assertThat(sluice(Map.of(), "serve", "--admin-max-connections", "many").err())
        .contains("--admin-max-connections : \"many\"");
    Run hosts = sluice(Map.of("SLUICE_ADMIN_HOSTS", "ok.example,https://bad.example"), "serve");
    assertThat(hosts.code()).isEqualTo(Main.USAGE);
    assertThat(hosts.err()).contains("--admin-hosts : \"https://bad.example\" (expected: "
        + "host names or IP addresses without ports");
  }
}
