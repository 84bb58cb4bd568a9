package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Challenge;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.gateway.Fixtures;
import dev.sluice.gateway.Fixtures.Harness;
import dev.sluice.server.ChallengeClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The challenge through the gateway's two request paths with the clocks in the test's hands
 * (the store's ticker, the challenge's wall clock): a clearance expires to the second, HTTP/2
 * streams get the same challenge as HTTP/1.1, and a client that keeps asking for pages and never
 * solves is refused while it holds one key of the store.
 */
class ChallengeGatewayIntegrationTests {

  static final byte[] KEY = "gateway-test-key-0123456789abcdef0123456789".getBytes(
      StandardCharsets.UTF_8);

  /** The challenge's wall clock, moved by the test. */
  static final class Wall implements InstantSource {
    final AtomicLong millis = new AtomicLong(1_767_225_600_000L);

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis.get());
    }
  }

  final Wall wall = new Wall();
  Harness h;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
  }

  Harness start(Challenge.Builder challenge) {
    Rule pages = Rule.builder("pages").key("ip")
        .limit(Limit.fixedWindow("pages", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).difficulty(10, 10).build();
    Policy policy = Policy.builder().rule(pages)
        .route(Route.builder("docs").path("/docs/**").rule("pages").build())
        .challenge(challenge.keys(List.of(KEY), "test").clock(wall).build()).build();
    h = new Harness(Fixtures.config(policy));
    return h;
  }

  @Test
  void clearance_expiresToTheSecond() throws Exception {
    start(Challenge.builder().clearance(Duration.ofMinutes(30)));
    ChallengeClient c = new ChallengeClient(h.gateway.port());
    assertThat(c.get("/docs/a", null, null).statusCode()).isEqualTo(200);
    HttpResponse<String> page = c.get("/docs/a", null, null);
    assertThat(page.statusCode()).isEqualTo(429);
    HttpResponse<String> passed = c.get("/docs/a", null,
        "sluice-challenge=" + ChallengeClient.solve(page.body()));
    assertThat(passed.statusCode()).isEqualTo(200);
    assertThat(passed.body()).contains("<title>Verified</title>");
    String clearance = ChallengeClient.setCookie(passed, "sluice-clearance-pages");
    c.get("/docs/b", null, null);   // the reset count's one request: the window is full again

    wall.millis.addAndGet(Duration.ofMinutes(30).minusSeconds(1).toMillis());
    assertThat(c.get("/docs/c", null, "sluice-clearance-pages=" + clearance).statusCode())
        .as("29:59 after the solve").isEqualTo(200);
    wall.millis.addAndGet(1000);
    HttpResponse<String> expired = c.get("/docs/c", null, "sluice-clearance-pages=" + clearance);
    assertThat(expired.statusCode()).as("30:00 after the solve").isEqualTo(429);
    assertThat(expired.body()).contains("<title>Checking your browser</title>");
  }

  @Test
  void http2Streams_getTheSameChallenge_andItsVerdicts() throws Exception {
    start(Challenge.builder());
    String base = "http://127.0.0.1:" + h.gateway.port();
    assertThat(h2(base + "/docs/a", null).status).isEqualTo(200);
    Curl page = h2(base + "/docs/a", null);
    assertThat(page.status).isEqualTo(429);
    assertThat(page.head).contains("content-security-policy: default-src 'none'; script-src "
        + "'nonce-", "cache-control: no-store", "retry-after: ");
    assertThat(page.body).contains("<title>Checking your browser</title>");
    Curl passed = h2(base + "/docs/a", "sluice-challenge=" + ChallengeClient.solve(page.body));
    assertThat(passed.status).isEqualTo(200);
    assertThat(passed.head).contains("set-cookie: sluice-clearance-pages=",
        "set-cookie: sluice-challenge=; Path=/; Max-Age=0");
    String clearance = passed.head.split("set-cookie: sluice-clearance-pages=")[1]
        .split(";")[0];
    h2(base + "/docs/b", null);
    Curl cleared = h2(base + "/docs/c", "sluice-clearance-pages=" + clearance);
    assertThat(cleared.status).isEqualTo(200);
    assertThat(cleared.body).doesNotContain("Checking your browser");
    Curl script = h2x(base + "/docs/d", "*/*");
    assertThat(script.status).isEqualTo(429);
    assertThat(script.body).endsWith("\"action\":\"challenge\"}");
  }

  @Test
  void aClientThatNeverSolves_isRefused_andHoldsOneKeyOfTheStore() throws Exception {
    start(Challenge.builder().limit(10, Duration.ofMinutes(1), 4, 100));
    ChallengeClient c = new ChallengeClient(h.gateway.port());
    c.get("/docs/a", null, null);
    List<Integer> statuses = new ArrayList<>();
    List<String> titles = new ArrayList<>();
    long keysAfterTen = 0;
    for (int i = 0; i < 200; i++) {
      HttpResponse<String> r = c.get("/docs/a", null, i % 2 == 0 ? null
          : "sluice-challenge=not.a.puzzle");
      statuses.add(r.statusCode());
      String body = r.body();
      titles.add(body.substring(body.indexOf("<title>") + 7, body.indexOf("</title>")));
      if (i == 10) {
        keysAfterTen = h.limiter.store().size();
      }
    }
    assertThat(statuses).containsOnly(403, 429);
    assertThat(titles.subList(0, 4)).containsExactly("Checking your browser", "Check failed",
        "Checking your browser", "Check failed");
    assertThat(titles.subList(10, 200)).as("past its score: refused").containsOnly(
        "Too many checks");
    assertThat(h.limiter.store().size()).as("keys held after 200 requests")
        .isEqualTo(keysAfterTen).isLessThanOrEqualTo(3);
  }

  record Curl(int status, String head, String body) {}

  /** One GET over h2c (prior knowledge) as a browser: status, head and body. */
  static Curl h2(String url, String cookie) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("-H", "Accept: " + ChallengeClient.HTML));
    if (cookie != null) {
      cmd.addAll(List.of("-H", "Cookie: " + cookie));
    }
    cmd.add(url);
    return curl(cmd);
  }

  static Curl h2x(String url, String accept) throws Exception {
    return curl(List.of("-H", "Accept: " + accept, url));
  }

  static Curl curl(List<String> args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("curl", "-s", "-i", "--max-time", "10",
        "--http2-prior-knowledge"));
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    int split = out.indexOf("\r\n\r\n");
    assertThat(split).as("a response from curl: %s", out).isPositive();
    String head = out.substring(0, split);
    assertThat(head).startsWith("HTTP/2 ");
    return new Curl(Integer.parseInt(head.substring(7, 10)), head, out.substring(split + 4));
  }
}
