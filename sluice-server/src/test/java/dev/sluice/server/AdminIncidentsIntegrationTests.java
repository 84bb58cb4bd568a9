package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The incident endpoints of the admin listener and {@code sluice admin}, end to end: a real
 * gateway on ephemeral loopback ports (memory store, then a real redis-server), flooded by the
 * JDK's HTTP client until it bans or refuses, then inspected and repaired through the admin API.
 */
class AdminIncidentsIntegrationTests {

  private static final String POLICY = String.join("\n",
      "dimensions:",
      "  user: header:X-User",
      "rules:",
      "  login:",
      "    key: user:ip",
      "    limits: [{type: token-bucket, burst: 2, refill: 1, period: 2s}]",
      "    ban: 1h",
      "  api:",
      "    key: user:ip",
      "    limits: [{type: fixed-window, limit: 2, window: 1h}]",
      "routes:",
      "  - {name: login, paths: [/login/**], rules: [login]}",
      "  - {name: api, paths: [/api/**], rules: [api]}",
      "");
  /** mallory's key under both rules: her user header, escaped, then the peer address. */
  private static final String MALLORY = "mallory/x%3Ay:127.0.0.1";
  private static final String MALLORY_PATH = "mallory%2Fx%253Ay%3A127.0.0.1";

  @TempDir
  Path dir;

  final ServedPolicy served = new ServedPolicy();
  SluiceServer server;

  @AfterEach
  void stop() throws Exception {
    served.close();
  }

  SluiceServer serve(String storeLines, String... extra) throws Exception {
    server = served.start(dir, POLICY + storeLines, extra);
    return server;
  }

  int gateway(String path, String user) throws Exception {
    return served.gateway(path, "X-User", user);
  }

  HttpResponse<String> admin(String method, String path, String... headers) throws Exception {
    return served.admin(method, path, headers);
  }

  String log() {
    return served.log();
  }

  /** The sluice command line, as a person runs it. */
  record Run(int code, String out, String err) {}

  Run sluice(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), env).run(args);
    return new Run(code, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  String adminAddress() {
    return "127.0.0.1:" + server.adminPort();
  }

  /** Floods /login as mallory until she is banned: 2 pass, the 3rd starts the ban. */
  void banMallory() throws Exception {
    List<Integer> codes = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      codes.add(gateway("/login/x", "mallory/x:y"));
    }
    assertThat(codes).containsExactly(200, 200, 429, 429, 429, 429, 429, 429, 429, 429);
  }

  /** The key of the last ban log line of {@code rule}, exactly as printed. */
  String loggedBanKey(String rule) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("ban applied rule=" + rule
        + " key=(\\S+)").matcher(log());
    String key = null;
    while (m.find()) {
      key = m.group(1);
    }
    assertThat(key).as("a ban log line of " + rule).isNotNull();
    return key;
  }

  void banListedThenLiftedThenNextRequestPasses() throws Exception {
    banMallory();
    // Issue 20 item 10: the log printed key=login:mallory..., which the admin API refused.
    String logged = loggedBanKey("login");
    assertThat(logged).as("the key text, without the rule name").isEqualTo(MALLORY);
    HttpResponse<String> bans = admin("GET", "/v1/bans");
    assertThat(bans.statusCode()).isEqualTo(200);
    assertThat(bans.body()).contains("\"rule\":\"login\",\"key\":\"" + MALLORY + "\"")
        .contains("\"banned\":true").contains("\"count\":1");
    HttpResponse<String> state = admin("GET", "/v1/keys/login/" + AdminCommand.segment(logged));
    assertThat(state.statusCode()).as("the API takes the key the log printed").isEqualTo(200);
    assertThat(state.body()).contains("\"present\":true").contains("\"banned\":true");

    HttpResponse<String> lift = admin("DELETE", "/v1/bans/login/" + MALLORY_PATH,
        "X-Sluice-Actor", "alice on-call \"x\"");
    assertThat(lift.statusCode()).isEqualTo(200);
    assertThat(lift.body()).contains("\"lifted\":true").contains("\"stateReset\":true");
    assertThat(log()).containsPattern("admin unban rule=login key=" + MALLORY.replace(".", "\\.")
        + " outcome=lifted status=200 peer=127\\.0\\.0\\.1 auth=token:[0-9a-f]{8} "
        + "actor=alice_on-call__x_");
    assertThat(admin("GET", "/v1/bans").body()).contains("\"count\":0");
    HttpResponse<String> again = admin("DELETE", "/v1/bans/login/" + MALLORY_PATH);
    assertThat(again.statusCode()).isEqualTo(404);
    assertThat(again.body()).contains("\"error\":\"not banned\"");
    assertThat(log()).contains("admin unban rule=login key=" + MALLORY
        + " outcome=\"not banned\" status=404");
    // Issue 20 item 10: the window was still spent, so the next request banned her again.
    assertThat(List.of(gateway("/login/x", "mallory/x:y"), gateway("/login/x", "mallory/x:y")))
        .as("decided afresh: the full burst of 2").containsExactly(200, 200);

    assertThat(gateway("/login/x", "mallory/x:y")).as("banned again").isEqualTo(429);
    HttpResponse<String> kept = admin("DELETE", "/v1/bans/login/" + MALLORY_PATH
        + "?keepState");
    assertThat(kept.statusCode()).isEqualTo(200);
    assertThat(kept.body()).contains("\"lifted\":true").contains("\"stateReset\":false");
    assertThat(log()).contains("admin unban rule=login key=" + MALLORY
        + " outcome=\"lifted (state kept)\" status=200");
    String keptState = admin("GET", "/v1/keys/login/" + MALLORY_PATH).body();
    assertThat(keptState).as("not banned, and the bucket not refilled to 2 by the unban")
        .contains("\"banned\":false").doesNotContain("\"remaining\":2");
    assertThat(admin("DELETE", "/v1/bans/login/" + MALLORY_PATH + "?keepState=maybe")
        .body()).contains("\"field\":\"keepState\"");
    assertThat(admin("POST", "/v1/keys/login/" + MALLORY_PATH + "/reset").statusCode())
        .isEqualTo(200);
  }

  void refusedListedThenResetRestoresTheFullLimit() throws Exception {
    for (int i = 0; i < 5; i++) {
      gateway("/api/x", "bob");
    }
    HttpResponse<String> refused = admin("GET", "/v1/refused?rule=api&limit=10");
    assertThat(refused.statusCode()).isEqualTo(200);
    assertThat(refused.body()).contains("\"key\":\"bob:127.0.0.1\"").contains("\"count\":1")
        .contains("\"refusedAgoMs\":");
    HttpResponse<String> reset = admin("POST", "/v1/keys/api/bob%3A127.0.0.1/reset");
    assertThat(reset.statusCode()).isEqualTo(200);
    assertThat(reset.body()).contains("\"hadState\":true");
    assertThat(log()).contains("admin reset rule=api key=bob:127.0.0.1 outcome=reset");
    assertThat(List.of(gateway("/api/x", "bob"), gateway("/api/x", "bob"),
        gateway("/api/x", "bob"))).as("the full limit of 2, then refused")
        .containsExactly(200, 200, 429);
    assertThat(admin("DELETE", "/v1/keys/api/bob%3A127.0.0.1").statusCode()).isEqualTo(200);
    assertThat(gateway("/api/x", "bob")).isEqualTo(200);
    assertThat(admin("GET", "/v1/refused?rule=api").body()).contains("\"count\":0");
  }

  @Test
  void memoryStore_banListedLiftedAndReset() throws Exception {
    serve("");
    banListedThenLiftedThenNextRequestPasses();
    refusedListedThenResetRestoresTheFullLimit();
  }

  @Test
  void redisStore_banListedLiftedAndReset() throws Exception {
    RedisProcess redis = RedisProcess.start();
    served.open.add(redis);
    serve(String.join("\n", "store:", "  uri: redis://127.0.0.1:" + redis.port,
        "  deadline: 2s", "  startupWait: 30s", ""));
    banListedThenLiftedThenNextRequestPasses();
    refusedListedThenResetRestoresTheFullLimit();
    assertThat(admin("POST", "/v1/keys/login/" + MALLORY_PATH + "/reset").body())
        .as("reset already").contains("\"hadState\":false");
    banMallory();
    Run bans = sluice(Map.of(), "admin", "--admin", adminAddress(), "bans");
    assertThat(bans.code()).isZero();
    assertThat(bans.out()).containsPattern("login  " + MALLORY.replace(".", "\\.")
        + "  (59m\\d+s|1h) ");
  }

  @Test
  void token_isRequiredOnV1_butNotOnHealthOrMetrics() throws Exception {
    Path token = dir.resolve("admin.token");
    Files.writeString(token, "s3cret-token-0123456789\n");
    serve("", "--admin-token-file", token.toString());
    assertThat(admin("GET", "/v1/bans").statusCode()).isEqualTo(401);
    assertThat(admin("GET", "/v1/bans").headers().firstValue("www-authenticate"))
        .contains("Bearer realm=\"sluice-admin\"");
    assertThat(admin("GET", "/v1/policy").statusCode()).isEqualTo(401);
    assertThat(admin("DELETE", "/v1/bans/login/x%3A1.2.3.4", "Authorization", "")
        .statusCode()).isEqualTo(401);
    assertThat(admin("GET", "/v1/bans", "Authorization", "Bearer s3cret-token-012345678")
        .statusCode()).as("one character short").isEqualTo(401);
    assertThat(admin("GET", "/v1/bans", "Authorization", "Basic czNjcmV0LXRva2Vu")
        .statusCode()).isEqualTo(401);
    assertThat(admin("GET", "/v1/bans", "Authorization", "Bearer s3cret-token-0123456789")
        .statusCode()).isEqualTo(200);
    assertThat(admin("GET", "/healthz").statusCode()).isEqualTo(200);
    assertThat(admin("GET", "/metrics").statusCode()).isEqualTo(200);
    assertThat(log()).doesNotContain("s3cret");

    banMallory();
    assertThat(admin("DELETE", "/v1/bans/login/" + MALLORY_PATH, "Authorization",
        "Bearer s3cret-token-0123456789").statusCode()).isEqualTo(200);
    assertThat(log()).containsPattern("admin unban rule=login key=" + MALLORY.replace(".", "\\.")
        + " outcome=lifted status=200 peer=127\\.0\\.0\\.1 auth=token:[0-9a-f]{8} actor=-");

    Run denied = sluice(Map.of(), "admin", "--admin", adminAddress(), "bans");
    assertThat(denied.code()).as("401 is a usage error").isEqualTo(2);
    assertThat(denied.err()).contains("unauthorized");
    Run allowed = sluice(Map.of("SLUICE_ADMIN_TOKEN_FILE", token.toString()), "admin",
        "--admin", adminAddress(), "bans");
    assertThat(allowed.code()).isZero();
    assertThat(allowed.out()).isEqualTo("no banned keys\n");
  }

  @Test
  void badInput_is400WithTheField_neverACrash() throws Exception {
    serve("");
    HttpResponse<String> huge = admin("GET", "/v1/bans?limit=5000");
    assertThat(huge.statusCode()).isEqualTo(400);
    assertThat(huge.body()).contains("\"field\":\"limit\"").contains("\"value\":\"\\\"5000\\\"\"")
        .contains("an integer from 1 to 1000");
    assertThat(admin("GET", "/v1/refused?rule=api&limit=-1").statusCode()).isEqualTo(400);
    assertThat(admin("GET", "/v1/refused?rule=api&limit=abc").statusCode()).isEqualTo(400);
    assertThat(admin("GET", "/v1/refused").body()).contains("\"field\":\"rule\"");
    assertThat(admin("GET", "/v1/refused?rule=api&color=red").body())
        .contains("\"field\":\"query\"");
    HttpResponse<String> unknown = admin("GET", "/v1/keys/nope/1.2.3.4");
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.body()).contains("\"error\":\"unknown rule\"").contains("[login, api]");
    HttpResponse<String> badEscape = admin("GET", "/v1/keys/login/%C3%28");
    assertThat(badEscape.statusCode()).isEqualTo(400);
    assertThat(badEscape.body()).contains("\"field\":\"path\"")
        .contains("percent-encoded UTF-8");
    try (java.net.Socket raw = new java.net.Socket("127.0.0.1", server.adminPort())) {
      raw.getOutputStream().write(("GET /v1/keys/login/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      String answer = new String(raw.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertThat(answer).as("a raw, malformed escape").startsWith("HTTP/1.1 400")
          .contains("'%' followed by two hex digits");
    }
    HttpResponse<String> arity = admin("GET", "/v1/keys/login/1.2.3.4");
    assertThat(arity.statusCode()).isEqualTo(400);
    assertThat(arity.body()).contains("\"field\":\"key\"")
        .contains("2 escaped value(s) joined by ':'");
    assertThat(admin("GET", "/v1/keys/login/" + "a".repeat(20_000) + "%3A1.2.3.4")
        .statusCode()).as("past the request line's cap of 8 KiB").isEqualTo(414);
    assertThat(admin("GET", "/v1/keys/login/a/b/c/d").statusCode()).isEqualTo(404);
    assertThat(admin("GET", "/v1/keys/login/").statusCode()).isEqualTo(400);
    HttpResponse<String> post = admin("POST", "/v1/bans");
    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.headers().firstValue("allow")).contains("GET, HEAD");
    assertThat(admin("PUT", "/v1/keys/login/x%3A1.2.3.4").statusCode()).isEqualTo(405);
    HttpResponse<String> badReset = admin("POST", "/v1/keys/nope/x/reset",
        "X-Sluice-Actor", "eve");
    assertThat(badReset.statusCode()).isEqualTo(404);
    assertThat(log()).contains("admin reset rule=nope key=x outcome=\"failed: 404\"");
    assertThat(admin("GET", "/healthz").statusCode()).as("still serving").isEqualTo(200);
  }

  @Test
  void sluiceAdmin_againstTheLiveServer() throws Exception {
    serve("");
    banMallory();
    String at = adminAddress();
    Run bans = sluice(Map.of(), "admin", "--admin", at, "bans");
    assertThat(bans.code()).isZero();
    assertThat(bans.out()).startsWith("RULE   KEY                      BANNED FOR  LAST REFUSED\n")
        .containsPattern("login  " + MALLORY.replace(".", "\\.") + "  (59m\\d+s|1h) ");
    Run json = sluice(Map.of(), "admin", "--admin", at, "--json", "bans", "login");
    assertThat(json.code()).isZero();
    assertThat(json.out()).startsWith("{\"bans\":[{\"rule\":\"login\"");
    Run show = sluice(Map.of(), "admin", "--admin", at, "show", "login", MALLORY);
    assertThat(show.code()).isZero();
    assertThat(show.out()).containsPattern("state        banned for (59m\\d+s|1h)\n")
        .contains("limit login  ");
    Run refused = sluice(Map.of(), "admin", "--admin", at, "--limit", "5", "refused", "login");
    assertThat(refused.code()).isZero();
    assertThat(refused.out()).containsPattern(MALLORY.replace(".", "\\.")
        + "  banned for (59m\\d+s|1h) ");

    Run unban = sluice(Map.of("USER", "carol"), "admin", "--admin", at, "unban", "login",
        MALLORY);
    assertThat(unban.code()).isZero();
    assertThat(unban.out()).isEqualTo("lifted the ban of " + MALLORY
        + " under login and reset its state\n");
    assertThat(log()).contains("actor=carol");
    Run twice = sluice(Map.of(), "admin", "--admin", at, "unban", "login", MALLORY);
    assertThat(twice.code()).as("not banned").isEqualTo(1);
    assertThat(twice.err()).contains("not banned");
    banMallory();
    Run keep = sluice(Map.of(), "admin", "--admin", at, "unban", "--keep-state", "login",
        MALLORY);
    assertThat(keep.code()).isZero();
    assertThat(keep.out()).isEqualTo("lifted the ban of " + MALLORY + " under login (state "
        + "kept)\n");
    assertThat(sluice(Map.of(), "admin", "--admin", at, "--keep-state", "bans").code())
        .as("--keep-state is unban's").isEqualTo(2);
    Run reset = sluice(Map.of(), "admin", "--admin", at, "reset", "login", MALLORY);
    assertThat(reset.code()).isZero();
    assertThat(reset.out()).isEqualTo("reset " + MALLORY + " under login\n");
    Run fresh = sluice(Map.of(), "admin", "--admin", at, "show", "login", MALLORY);
    assertThat(fresh.out()).contains("limit login  2 left, full in 0s");

    assertThat(sluice(Map.of(), "admin", "--admin", at, "show", "nope", "x").code())
        .as("unknown rule").isEqualTo(1);
    assertThat(sluice(Map.of(), "admin", "--admin", at, "show", "login").code())
        .as("usage").isEqualTo(2);
    assertThat(sluice(Map.of(), "admin", "--admin", at, "frobnicate").code()).isEqualTo(2);
    assertThat(sluice(Map.of(), "admin", "--admin", at, "show", "login", "only-one").code())
        .as("a key the server refuses: 400").isEqualTo(2);
    int dead = RedisProcess.freePort();
    Run unreachable = sluice(Map.of(), "admin", "--admin", "127.0.0.1:" + dead, "bans");
    assertThat(unreachable.code()).isEqualTo(3);
    assertThat(unreachable.err()).contains("cannot reach 127.0.0.1:" + dead);
  }
}
