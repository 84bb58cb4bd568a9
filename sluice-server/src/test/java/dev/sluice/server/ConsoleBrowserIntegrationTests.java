package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.WebElement;

/**
 * The console in a real headless Chromium against a real server on loopback: sign-in with the
 * admin token, a flood started here reaching the refusal chart and the refused clients, a ban
 * lifted from the page, reloads in the history, and no console error. Screenshots go to
 * {@code target/console/}, or to the directory in {@code -Dsluice.console.screenshots} (the
 * ones in docs/console were taken with {@code -Dsluice.console.screenshots=../docs/console}).
 */
class ConsoleBrowserIntegrationTests {

  static final String TOKEN = "console-test-token-0123456789";

  static String policy(int loginBurst) {
    return String.join("\n",
        "dimensions:",
        "  user: header:X-User",
        "rules:",
        "  login:",
        "    key: ip",
        "    limits: [{type: token-bucket, burst: " + loginBurst + ", refill: 1, period: 10s}]",
        "    ban: 10m",
        "  api:",
        "    key: user:ip",
        "    limits: [{type: fixed-window, limit: 20, window: 1m}]",
        "routes:",
        "  - {name: login, paths: [/login/**], rules: [login]}",
        "  - {name: api, paths: [/api/**], rules: [api]}",
        "store:",
        "  maxKeys: 2000000",
        "");
  }

  @TempDir
  Path dir;

  final ServedPolicy served = new ServedPolicy();
  SluiceServer server;

  @AfterEach
  void stop() throws Exception {
    served.close();
  }

  void serve(String... extra) throws Exception {
    server = served.start(dir, policy(3), extra);
  }

  String console() {
    return "http://127.0.0.1:" + server.adminPort() + "/";
  }

  int gateway(String path, String user) throws Exception {
    return served.gateway(path, "X-User", user);
  }


  static Path shots() {
    String d = System.getProperty("sluice.console.screenshots");
    return Path.of(d == null || d.isBlank() ? "target/console" : d);
  }

  static boolean hidden(Browser b, String id) {
    return Boolean.TRUE.equals(b.script("return document.getElementById(arguments[0]).hidden",
        id));
  }

  static String text(Browser b, String selector) {
    Object t = b.script("var e = document.querySelector(arguments[0]);"
        + " return e ? e.textContent : '';", selector);
    return String.valueOf(t);
  }

  static void type(WebElement e, String s) {
    e.clear();
    e.sendKeys(s);
  }

  /** Requests from one client on /login and from six users on /api, until stopped. */
  final class Flood implements AutoCloseable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong refused = new AtomicLong();
    final Thread thread = new Thread(() -> {
      try {
        for (int i = 0; !stop.get(); i++) {
          if (gateway(i % 2 == 0 ? "/login/x" : "/api/x", "user-" + (i / 2 % 6)) == 429) {
            refused.incrementAndGet();
          }
        }
      } catch (Exception e) {
        // the server stopped under the flood; the test's own assertions tell what happened
      }
    }, "flood");

    Flood start() {
      thread.start();
      return this;
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(10_000);
    }
  }

  @Test
  void withAToken_aFloodShowsWithin3s_aBanLiftedFromThePageLetsTheClientThrough_reloadsShow()
      throws Exception {
    Path tokenFile = dir.resolve("admin.token");
    Files.writeString(tokenFile, TOKEN + "\n");
    serve("--admin-token-file", tokenFile.toString());
    assertThat(served.client.send(HttpRequest.newBuilder(URI.create(console()
        + "v1/console/snapshot")).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
        .as("the data needs the token").isEqualTo(401);

    try (Browser b = Browser.start(1280, 900)) {
      b.open(console());
      b.await(Duration.ofSeconds(10), "the sign-in form", () -> !hidden(b, "sign-in"));
      assertThat(hidden(b, "main")).as("nothing shown without the token").isTrue();
      b.screenshot(shots().resolve("console-sign-in.png"));

      type(b.find("#token"), "not-the-token-at-all");
      b.find("#sign-in-button").click();
      b.await(Duration.ofSeconds(10), "the wrong token refused",
          () -> text(b, "#sign-in-error").contains("refused the token"));
      assertThat(hidden(b, "main")).isTrue();
      b.await(Duration.ofSeconds(10), "the browser's report of the 401",
          () -> !b.consoleErrors().isEmpty());
      assertThat(b.takeConsoleErrors()).as("the 401 the browser reports, and nothing else")
          .isNotEmpty().allMatch(e -> e.contains("401"));

      type(b.find("#token"), TOKEN);
      type(b.find("#actor"), "alice");
      b.find("#sign-in-button").click();
      b.await(Duration.ofSeconds(10), "the console, live", () -> !hidden(b, "main")
          && text(b, "#live").equals("live"));
      assertThat(b.script("return sessionStorage.getItem('sluice.console.token')"))
          .isEqualTo(TOKEN);
      assertThat(b.script("return document.cookie")).isEqualTo("");

      try (Flood flood = new Flood().start()) {
        b.await(Duration.ofSeconds(3), "the flood in the refusal chart and the refused list",
            () -> {
              String series = String.valueOf(b.script("return Array.from(document"
                  + ".querySelectorAll('#chart-refusals .sc-series title'))"
                  + ".map(function (t) { return t.textContent; }).join('|')"));
              return series.contains("login: total") && !series.contains("login: total 0,")
                  && !b.findAll("#refused tbody tr[data-rule='login'][data-key='127.0.0.1']")
                      .isEmpty();
            });
        b.await(Duration.ofSeconds(10), "the ban in the bans table, the api users refused",
            () -> !b.findAll("#bans tbody tr[data-rule='login'][data-key='127.0.0.1']")
                .isEmpty() && b.findAll("#refused tbody tr[data-rule='api']").size() >= 3);
        b.screenshot(shots().resolve("console-incident.png"));
      }
      assertThat(gateway("/login/x", "-")).as("still banned").isEqualTo(429);

      b.find("#bans tbody tr[data-rule='login'][data-key='127.0.0.1'] button[data-action='lift']")
          .click();
      b.await(Duration.ofSeconds(10), "the lift in the audit log, with who did it", () -> {
        String row = text(b, "#audit tbody tr[data-action='unban']");
        return row.contains("login") && row.contains("127.0.0.1") && row.contains("lifted")
            && row.contains("alice");
      });
      assertThat(gateway("/login/x", "-")).as("through at once: lifted and reset")
          .isEqualTo(200);
      assertThat(served.log()).containsPattern(
          "admin unban rule=login key=127\\.0\\.0\\.1 outcome=lifted status=200 "
              + "peer=127\\.0\\.0\\.1 auth=token:[0-9a-f]{8} actor=alice");
      b.await(Duration.ofSeconds(10), "the lifted ban gone from the table",
          () -> b.findAll("#bans tbody tr[data-rule='login']").isEmpty());

      Files.writeString(dir.resolve("policy.yaml"), policy(5));
      b.await(Duration.ofSeconds(10), "the reload in the history and the new policy shown",
          () -> b.findAll("#reloads tbody tr").size() == 2
              && text(b, "#reloads tbody tr").contains("file changed")
              && text(b, "#reloads tbody tr").contains("ok")
              && text(b, "#rules tbody").contains("burst 5"));
      Files.writeString(dir.resolve("policy.yaml"), policy(5).replace("burst: 5", "burst: -5"));
      b.await(Duration.ofSeconds(10), "the rejected reload with its error", () ->
          text(b, "#reloads tbody tr[data-result='rejected']").contains("burst"));

      b.script("document.getElementById('lookup-rule').value = 'login'");
      type(b.find("#lookup-key"), "127.0.0.1");
      b.find("#lookup button[type='submit']").click();
      b.await(Duration.ofSeconds(10), "the key's state", () ->
          text(b, "#lookup-result").contains("limit login"));
      b.screenshot(shots().resolve("console.png"));
      b.assertNoConsoleErrors();
    }
  }

  @Test
  void aMillionTrackedKeys_thePageGetsTopListsAndAggregatesOnly() throws Exception {
    serve();
    Rule api = server.policy().config().policy().rules().get("api");
    RateLimiter limiter = RateLimiter.of(server.store());
    for (int i = 0; i < 1_000_000; i++) {
      limiter.check(api, Identity.ip("10." + (i >> 16) + "." + (i >> 8 & 255) + "." + (i & 255))
          .with("user", "u"));
    }
    // 2,000 of them over their limit: more refusing keys than any list shows.
    for (int i = 0; i < 2000; i++) {
      Identity who = Identity.ip("10.0." + (i >> 8) + "." + (i & 255)).with("user", "u");
      for (int j = 0; j < 20; j++) {
        limiter.check(api, who);
      }
    }
    assertThat(server.store().size()).isGreaterThanOrEqualTo(1_000_000);

    HttpResponse<java.io.InputStream> events = served.client.send(HttpRequest.newBuilder(URI.create(
        console() + "v1/console/events")).build(), HttpResponse.BodyHandlers.ofInputStream());
    String tick;
    try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(
        events.body(), StandardCharsets.UTF_8))) {
      String line;
      do {
        line = r.readLine();
      } while (line != null && !line.startsWith("data: {"));   // the stream's id comes first
      tick = line;
    }
    assertThat(tick).contains("\"trackedKeys\":").contains("\"count\":10,");
    assertThat(tick.length()).as("one second of the live view, whatever the keys")
        .isLessThan(32 * 1024);
    String history = served.client.send(HttpRequest.newBuilder(URI.create(console()
        + "v1/console/history?resolution=1s")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
    assertThat(history.length()).isLessThan(64 * 1024);

    try (Browser b = Browser.start(1280, 900)) {
      b.open(console());
      b.await(Duration.ofSeconds(10), "straight in (no token), live",
          () -> !hidden(b, "main") && text(b, "#live").equals("live"));
      b.await(Duration.ofSeconds(10), "a million keys counted, ten listed for api", () ->
          text(b, "#now-keys").matches("1,0\\d\\d,\\d{3}")
              && b.findAll("#refused tbody tr[data-rule='api']").size() == 10
              && text(b, "#refused-summary").contains("api: 10+ refusing"));
      long rows = (Long) b.script("return document.querySelectorAll('tr').length");
      assertThat(rows).as("the page holds lists, never the keys").isLessThan(200);
      b.assertNoConsoleErrors();
    }
  }
}
