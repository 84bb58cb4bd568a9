package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.Cookie;

/**
 * Issue 22's challenge through {@code sluice serve} in a real headless Chromium: past the limit
 * the browser gets the page, its worker solves the proof of work, and the upstream's page
 * follows with the clearance cookie set; without JavaScript the page reloads after its wait and
 * passes. Every console error and CSP violation the page causes fails the test (the browser
 * harness collects them). A client that is not a browser gets the refusal; the browser's cookie,
 * edited by one byte or taken to another /64, is challenged again.
 *
 * <p>The browser comes from 2001:db8:1:1::10 (an X-Forwarded-For header the policy trusts: one
 * hop), so its clearance is bound to 2001:db8:1:1::/64.
 */
class ChallengeBrowserIntegrationTests {

  static final String BROWSER_IP = "2001:db8:1:1::10";
  static final String KEY = "c2x1aWNlIGNoYWxsZW5nZSB0ZXN0IGtleSAwMTIzNDU2Nzg5";

  @TempDir
  Path dir;

  final ByteArrayOutputStream log = new ByteArrayOutputStream();
  final List<String> upstreamPaths = new CopyOnWriteArrayList<>();
  HttpServer upstream;
  SluiceServer server;

  @BeforeEach
  void startUpstream() throws Exception {
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    upstream.createContext("/", exchange -> {
      if (exchange.getRequestURI().getPath().startsWith("/docs/")) {
        upstreamPaths.add(exchange.getRequestURI().getPath());   // not the browser's favicon
      }
      byte[] page = ("<!doctype html><html lang=\"en\"><head><title>Upstream page</title></head>"
          + "<body><h1>Docs</h1></body></html>").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
      exchange.sendResponseHeaders(200, page.length);
      exchange.getResponseBody().write(page);
      exchange.close();
    });
    upstream.start();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    upstream.stop(0);
  }

  void serve(String challengeExtra) throws Exception {
    Files.writeString(dir.resolve("challenge.keys"), KEY + "\n");
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, String.join("\n",
        "trust:",
        "  hops: 1",
        "rules:",
        "  pages:",
        "    limits: [{type: sliding-log, limit: 1, window: 1h}]",
        "    action: challenge",
        "    difficulty: 14",
        "routes:",
        "  - {name: docs, paths: [/docs/**], rules: [pages]}",
        "challenge:",
        "  keyFile: challenge.keys",
        challengeExtra,
        ""));
    server = SluiceServer.start(Main.parseServe(List.of("--listen", "127.0.0.1:0", "--admin",
        "off", "--upstream", "http://127.0.0.1:" + upstream.getAddress().getPort(), "--config",
        policy.toString()), Map.of()), Map.of(),
        new Log(new PrintStream(log, true, StandardCharsets.UTF_8)));
  }

  String url(String path) {
    return "http://127.0.0.1:" + server.port() + path;
  }

  /**
   * The console's errors, which must be only the challenge page's own status (Chromium logs a
   * page answered 429 as a failed load): no CSP violation, no script error.
   */
  static void onlyThe429(Browser b, String path) {
    assertThat(b.takeConsoleErrors()).allSatisfy(e -> assertThat(e).matches(
        "network: Failed to load resource: the server responded with a status of 429 \\(Too "
            + "Many Requests\\) \\(http://127\\.0\\.0\\.1:\\d+" + path + "\\)"));
  }

  long challenges(String step) {
    return server.metrics().challenges("pages", step);
  }

  @Test
  void browser_solvesTheChallenge_andGetsTheUpstreamsPage_aScriptTheRefusal() throws Exception {
    serve("  clearanceRequests: 3");
    String clearance;
    try (Browser b = Browser.start()) {
      b.extraHeaders(Map.of("X-Forwarded-For", BROWSER_IP));
      b.open(url("/docs/a"));
      assertThat(b.driver().getTitle()).isEqualTo("Upstream page");
      b.open(url("/docs/b"));   // past the limit: the challenge page, solved, reloaded
      b.await(Duration.ofSeconds(30), "the upstream's page after the challenge",
          () -> "Upstream page".equals(b.driver().getTitle()));
      assertThat(challenges("issued")).isEqualTo(1);
      assertThat(challenges("solved")).isEqualTo(1);
      Cookie cookie = b.driver().manage().getCookieNamed("sluice-clearance-pages");
      assertThat(cookie).as("the clearance cookie").isNotNull();
      assertThat(cookie.isHttpOnly()).isTrue();
      assertThat(cookie.getSameSite()).isEqualTo("Lax");
      clearance = cookie.getValue();
      assertThat(clearance).matches("[A-Za-z0-9_-]{4}\\.\\d{10}\\.[A-Za-z0-9_-]{16}\\."
          + "[A-Za-z0-9_-]{43}");
      assertThat(b.driver().manage().getCookieNamed("sluice-challenge"))
          .as("the answer cookie, spent and removed").isNull();
      assertThat(upstreamPaths).containsExactly("/docs/a", "/docs/b");
      onlyThe429(b, "/docs/b");

      // The clearance is a budget of 3 requests past the limit: /docs/b's reload spent one,
      // these two the rest; the next is challenged again, harder, and solved again.
      b.open(url("/docs/c"));
      b.open(url("/docs/d"));
      assertThat(b.driver().getTitle()).isEqualTo("Upstream page");
      assertThat(challenges("issued")).as("no second page yet").isEqualTo(1);
      assertThat(challenges("cleared")).isEqualTo(3);
      b.open(url("/docs/e"));
      b.await(Duration.ofSeconds(30), "the upstream's page after the second challenge",
          () -> "Upstream page".equals(b.driver().getTitle()));
      // The page's request and the answer's both came with the spent clearance.
      assertThat(challenges("spent")).isEqualTo(2);
      assertThat(challenges("issued")).isEqualTo(2);
      assertThat(challenges("solved")).isEqualTo(2);
      assertThat(upstreamPaths).containsExactly("/docs/a", "/docs/b", "/docs/c", "/docs/d",
          "/docs/e");
      onlyThe429(b, "/docs/e");
      clearance = b.driver().manage().getCookieNamed("sluice-clearance-pages").getValue();
    }

    ChallengeClient client = new ChallengeClient(server.port());
    HttpResponse<String> script = client.send("/docs/x", "*/*", BROWSER_IP, null);
    assertThat(script.statusCode()).isEqualTo(429);
    assertThat(script.headers().firstValue("content-type")).hasValue(
        "application/json; charset=utf-8");
    assertThat(script.body()).startsWith("{\"error\":\"too many requests\"")
        .endsWith("\"rule\":\"pages\",\"action\":\"challenge\"}");
    HttpResponse<String> curl = client.send("/docs/x", null, BROWSER_IP, null);
    assertThat(curl.statusCode()).as("no Accept at all, as curl sends").isEqualTo(429);
    assertThat(curl.body()).doesNotContain("<html");

    String cookie = "sluice-clearance-pages=";
    assertThat(client.get("/docs/f", "2001:db8:1:1:aaaa::77", cookie + clearance).statusCode())
        .as("another address of the browser's /64").isEqualTo(200);
    for (int i : new int[] {0, 6, clearance.length() - 1}) {
      HttpResponse<String> edited = client.get("/docs/g", BROWSER_IP,
          cookie + ChallengeClient.edit(clearance, i));
      assertThat(edited.statusCode()).as("edited at %d", i).isEqualTo(429);
      assertThat(edited.body()).contains("<title>Checking your browser</title>");
    }
    assertThat(client.get("/docs/h", "2001:db8:1:2::10", null).statusCode())
        .as("another /64: its own key's first request").isEqualTo(200);
    HttpResponse<String> moved = client.get("/docs/h", "2001:db8:1:2::10", cookie + clearance);
    assertThat(moved.statusCode()).as("the cookie taken to another /64").isEqualTo(429);
    assertThat(moved.body()).contains("<title>Checking your browser</title>");
  }

  /** No clearance without work, by default: without JavaScript the page asks for it. */
  @Test
  void withoutJavaScript_byDefault_thePageAsksForIt_andWaitingPassesNothing() throws Exception {
    serve("  noscriptWait: 1s");
    try (Browser b = Browser.start()) {
      b.extraHeaders(Map.of("X-Forwarded-For", BROWSER_IP));
      b.javascript(false);
      b.open(url("/docs/a"));
      b.open(url("/docs/b"));
      assertThat(b.driver().getPageSource()).contains("This check needs JavaScript");
      Thread.sleep(2500);   // past noscriptWait: a refreshing page would have reloaded by now
      b.open(url("/docs/b"));
      assertThat(b.driver().getTitle()).isNotEqualTo("Upstream page");
      assertThat(challenges("solved")).isZero();
      assertThat(b.driver().manage().getCookieNamed("sluice-clearance-pages")).isNull();
      assertThat(upstreamPaths).containsExactly("/docs/a");
      onlyThe429(b, "/docs/b");
    }
  }

  /** The opt-in: the page reloads after its wait and passes (a clearance for waiting). */
  @Test
  void withoutJavaScript_optedIn_thePageReloadsAfterItsWait_andPasses() throws Exception {
    serve("  noscript: refresh\n  noscriptWait: 1s");
    try (Browser b = Browser.start()) {
      b.extraHeaders(Map.of("X-Forwarded-For", BROWSER_IP));
      b.javascript(false);
      b.open(url("/docs/a"));
      b.open(url("/docs/b"));
      b.await(Duration.ofSeconds(30), "the upstream's page after the noscript wait",
          () -> "Upstream page".equals(b.driver().getTitle()));
      assertThat(challenges("issued")).isEqualTo(1);
      assertThat(challenges("solved")).isEqualTo(1);
      assertThat(b.driver().manage().getCookieNamed("sluice-clearance-pages")).isNotNull();
      assertThat(upstreamPaths).containsExactly("/docs/a", "/docs/b");
      onlyThe429(b, "/docs/b");
    }
  }

  /** The page as a screen reader and a strict CSP see it: text, a live status, nothing external. */
  @Test
  void thePage_isAccessibleText_underAStrictPolicy() throws Exception {
    serve("");
    ChallengeClient client = new ChallengeClient(server.port());
    client.get("/docs/a", BROWSER_IP, null);
    HttpResponse<String> page = client.get("/docs/a", BROWSER_IP, null);
    assertThat(page.statusCode()).isEqualTo(429);
    assertThat(page.headers().firstValue("retry-after")).isPresent();
    String csp = page.headers().firstValue("content-security-policy").orElseThrow();
    assertThat(csp).matches("default-src 'none'; script-src 'nonce-[A-Za-z0-9_-]{16}'; "
        + "style-src 'nonce-[A-Za-z0-9_-]{16}'; worker-src blob:; base-uri 'none'; "
        + "form-action 'none'; frame-ancestors 'none'");
    assertThat(page.body().getBytes(StandardCharsets.UTF_8).length).isLessThan(16 * 1024);
    assertThat(page.body()).contains("<html lang=\"en\">", "<h1>Checking your browser</h1>",
        "role=\"status\" aria-live=\"polite\"", "aria-label=\"Checking your browser\"",
        "<noscript>");
    assertThat(page.body()).doesNotContainPattern("(src|href)=\"(https?:)?//");
    assertThat(URI.create(url("/")).getHost()).isEqualTo("127.0.0.1");
  }
}
