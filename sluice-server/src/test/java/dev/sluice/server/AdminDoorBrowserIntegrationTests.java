package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin listener's door in a real headless Chromium: the console on a generated token (open
 * at once, asking for the token at the first lift), and the attacks of issue 30 played from
 * another origin in the same browser (a form POST and a no-cors fetch trying to lift a ban and
 * to ban an address) and by DNS rebinding (a name the browser resolves to the listener). The
 * refusals are counted by the listener ({@code sluice_admin_refused_total}), so the test knows
 * the browser sent them, and the store shows nothing changed.
 */
class AdminDoorBrowserIntegrationTests {

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

  final ServedPolicy served = new ServedPolicy();
  SluiceServer server;
  HttpServer attacker;

  @AfterEach
  void stop() throws Exception {
    if (attacker != null) {
      attacker.stop(0);
    }
    served.close();
  }

  String console() {
    return "http://127.0.0.1:" + server.adminPort() + "/";
  }

  /** Three requests to /login from 127.0.0.1: two pass, the third starts a 10 minute ban. */
  void ban() throws Exception {
    assertThat(List.of(served.gateway("/login/x"), served.gateway("/login/x"),
        served.gateway("/login/x"))).containsExactly(200, 200, 429);
    assertThat(banned("127.0.0.1")).isTrue();
  }

  boolean banned(String key) throws Exception {
    return served.admin("GET", "/v1/keys/login/" + key).body().contains("\"banned\":true");
  }

  long refused(String reason) throws Exception {
    Matcher m = Pattern.compile("sluice_admin_refused_total\\{reason=\"" + reason
        + "\"[^}]*} ([0-9.]+)").matcher(served.admin("GET", "/metrics").body());
    return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
  }

  static boolean hidden(Browser b, String id) {
    return Boolean.TRUE.equals(b.script("return document.getElementById(arguments[0]).hidden",
        id));
  }

  static String text(Browser b, String selector) {
    return String.valueOf(b.script("var e = document.querySelector(arguments[0]);"
        + " return e ? e.textContent : '';", selector));
  }

  @Test
  void generatedToken_theConsoleOpensAtOnce_andAsksForTheTokenAtTheFirstLift() throws Exception {
    server = served.start(dir, POLICY);
    ban();
    try (Browser b = Browser.start(1280, 900)) {
      b.open(console());
      b.await(Duration.ofSeconds(10), "straight in: reads need no token", () ->
          !hidden(b, "main") && text(b, "#live").equals("live")
              && !b.findAll("#bans tbody tr[data-rule='login'][data-key='127.0.0.1']").isEmpty());
      assertThat(hidden(b, "sign-in-open")).as("a way to sign in for actions").isFalse();

      b.find("#bans tbody tr[data-rule='login'][data-key='127.0.0.1'] button[data-action='lift']")
          .click();
      b.await(Duration.ofSeconds(10), "the form asks for the token, naming its file",
          () -> !hidden(b, "sign-in")
              && text(b, "#sign-in-why").contains(server.adminTokenFile().toString()));
      assertThat(banned("127.0.0.1")).as("nothing sent without the token").isTrue();
      b.screenshot(ConsoleBrowserIntegrationTests.shots().resolve("console-action-sign-in.png"));

      ConsoleBrowserIntegrationTests.type(b.find("#token"), served.token());
      ConsoleBrowserIntegrationTests.type(b.find("#actor"), "carol");
      b.find("#sign-in-button").click();
      b.await(Duration.ofSeconds(10), "the lift, run once the token was given", () -> {
        String row = text(b, "#audit tbody tr[data-action='unban']");
        return row.contains("127.0.0.1") && row.contains("lifted") && row.contains("carol");
      });
      assertThat(hidden(b, "sign-in")).isTrue();
      assertThat(banned("127.0.0.1")).isFalse();
      assertThat(served.gateway("/login/x")).as("through at once").isEqualTo(200);
      assertThat(served.log()).containsPattern("admin unban rule=login key=127\\.0\\.0\\.1 "
          + "outcome=lifted status=200 peer=127\\.0\\.0\\.1 auth=token:[0-9a-f]{8} actor=carol");
      b.await(Duration.ofSeconds(10), "the header says who acts", () ->
          text(b, "#who").equals("carol") && !hidden(b, "sign-out"));
      b.screenshot(ConsoleBrowserIntegrationTests.shots().resolve("console-after-action.png"));
      b.await(Duration.ofSeconds(15), "the page sends its stream's nonce back (one every 10 s)",
          () -> {
            try {
              return served.admin("GET", "/v1/console/snapshot").body()
                  .matches("(?s).*\"acks\":[1-9].*");
            } catch (Exception e) {
              return false;
            }
          });
      b.assertNoConsoleErrors();
    }
  }

  @Test
  void anotherOrigin_cannotLiftOrBan_andARebindingNameIsRefused() throws Exception {
    server = served.start(dir, POLICY);
    ban();
    int admin = server.adminPort();
    // The attacker's page: another origin (another port) on the operator's machine.
    String page = String.join("\n",
        "<!doctype html><html><body>",
        "<iframe name=\"sink\"></iframe>",
        "<form id=\"lift\" method=\"POST\" target=\"sink\"",
        "      action=\"http://127.0.0.1:" + admin + "/v1/keys/login/127.0.0.1/reset\">",
        "  <input name=\"x\" value=\"1\"></form>",
        "<script>",
        "document.getElementById('lift').submit();",
        "fetch('http://127.0.0.1:" + admin + "/v1/bans/login/203.0.113.9?duration=1h',",
        "  {method: 'POST', mode: 'no-cors', credentials: 'include'})",
        "  .then(function () { document.title = 'sent'; },",
        "        function () { document.title = 'sent'; });",
        "</script></body></html>");
    attacker = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    attacker.createContext("/", exchange -> {
      byte[] body = page.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    attacker.start();
    long crossSiteBefore = refused("cross-site");

    try (Browser b = Browser.start(1280, 900, List.of(
        "--host-resolver-rules=MAP attacker.example 127.0.0.1"))) {
      b.open("http://127.0.0.1:" + attacker.getAddress().getPort() + "/attack.html");
      b.await(Duration.ofSeconds(10), "both attacks sent and refused by the door",
          () -> {
            try {
              return refused("cross-site") - crossSiteBefore >= 2;
            } catch (Exception e) {
              return false;
            }
          });
      assertThat(banned("127.0.0.1")).as("the form POST lifted nothing").isTrue();
      assertThat(banned("203.0.113.9")).as("the no-cors fetch banned nobody").isFalse();
      assertThat(refused("token")).as("refused for their origin, before any token check")
          .isZero();
      assertThat(served.log()).doesNotContain("admin reset").doesNotContain("admin ban ");

      // DNS rebinding: a name of the attacker's that resolves to the listener. What a rebound
      // page's same-origin fetch sends is a request with that name as its Host.
      b.open("http://attacker.example:" + admin + "/v1/bans");
      b.await(Duration.ofSeconds(10), "the rebound name refused", () ->
          text(b, "body").contains("misdirected request"));
      b.open("http://attacker.example:" + admin + "/");
      b.await(Duration.ofSeconds(10), "not even the page", () ->
          text(b, "body").contains("misdirected request"));
      b.screenshot(ConsoleBrowserIntegrationTests.shots().resolve("console-rebinding-421.png"));
      assertThat(refused("host")).isGreaterThanOrEqualTo(2);
      assertThat(b.takeConsoleErrors()).as("what the browser saw: the refusals, and the "
          + "listener's answer kept out of the attacker's frame").isNotEmpty().allMatch(e ->
          e.contains("status of 403") || e.contains("status of 421")
              || e.contains("frame-ancestors 'none'"));
    }
  }
}
