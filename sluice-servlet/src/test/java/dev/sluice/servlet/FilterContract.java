package dev.sluice.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.FailingStore;
import dev.sluice.core.Identity;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Verdicts;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The filter in a real servlet container, over real HTTP: what every container must show. Each
 * container's test class starts it with the application below: a servlet answering 200 "ok"
 * (and which decision it saw), behind a filter that signs a request in as the user named by
 * {@code X-Test-User}, behind Sluice.
 */
abstract class FilterContract {

  /** A started container serving {@link #APP} behind {@code sluice}; closes it. */
  interface Running extends AutoCloseable {
    int port();

    @Override
    void close() throws Exception;
  }

  static final HttpServlet APP = new HttpServlet() {
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp)
        throws java.io.IOException {
      Decision d = (Decision) req.getAttribute(SluiceFilter.DECISION);
      if (req.getRequestURI().startsWith("/fail")) {
        resp.setStatus(401);   // for rules counted on responses
      }
      resp.setContentType("text/plain");
      resp.getWriter().write("ok " + (d == null ? "-" : d.rule()) + " "
          + (req.getUserPrincipal() == null ? "-" : req.getUserPrincipal().getName()));
    }
  };

  abstract Running start(Filter sluice) throws Exception;

  @TempDir
  Path dir;

  private final HttpClient client = HttpClient.newHttpClient();
  private Running running;

  @AfterEach
  void stop() throws Exception {
    if (running != null) {
      running.close();
    }
  }

  private int serve(PolicyConfig policy, Store store) throws Exception {
    running = start(SluiceFilter.builder().limiter(RateLimiter.of(store))
        .policy(() -> policy).build());
    return running.port();
  }

  private static PolicyConfig policy(String yaml) throws Exception {
    return PolicyLoader.parse(yaml, "test.yaml", null, Map.of()).config();
  }

  private HttpResponse<String> get(int port, String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void escalation_denyList_countedStatuses_leases_andHumanChecksFailClosed() throws Exception {
    Files.writeString(dir.resolve("secret.key"), "s3cret");
    PolicyConfig c = PolicyLoader.parse(String.join("\n",
        "trust: {hops: 1}",
        "deny: [203.0.113.0/24]",
        "humanChecks: {turnstile: {secretFile: secret.key}}",
        "rules:",
        "  failed: {countStatus: [401], limits: [{type: fixed-window, limit: 2, window: 1h}]}",
        "  conn: {limits: [{type: concurrency, max: 1}]}",
        "routes:",
        "  - {paths: [/signin], humanCheck: turnstile}",
        "  - {paths: ['/fail/**', '/ok/**'], rules: [failed, conn]}",
        ""), dir.resolve("p.yaml").toString(), dir.resolve("p.yaml"), Map.of()).config();
    int port = serve(c, Store.memory(() -> 0L, 100));
    HttpResponse<String> denied = get(port, "/ok/x", "X-Forwarded-For", "203.0.113.4");
    assertThat(denied.statusCode()).isEqualTo(403);
    assertThat(denied.body()).isEqualTo("{\"error\":\"forbidden\",\"reason\":\"deny list\"}");
    // Each request holds the cap of one while it runs and gives it back when the chain returns.
    for (int i = 0; i < 3; i++) {
      assertThat(get(port, "/ok/x").statusCode()).isEqualTo(200);
    }
    assertThat(get(port, "/fail/1").statusCode()).isEqualTo(401);
    assertThat(get(port, "/fail/2").statusCode()).isEqualTo(401);
    HttpResponse<String> refused = get(port, "/ok/x");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.body()).contains("\"rule\":\"failed\"");
    // No verifier in the filter: a human-checked route is never passed on unverified.
    assertThat(get(port, "/signin").statusCode()).isEqualTo(503);
  }

  @Test
  void seed000_sixteenthAnalysisCall_is429_withTheSeedsBodyAndHeaders() throws Exception {
    int port = serve(PolicyLoader.loadDefault(Map.of()).config(), Store.memory(() -> 0L, 100));
    for (int i = 1; i <= 15; i++) {
      HttpResponse<String> ok = get(port, "/api/analysis/x");
      assertThat(ok.statusCode()).as("call %d", i).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("ok analysis -");
      assertThat(ok.headers().firstValue("X-RateLimit-Remaining")).hasValue("" + (15 - i));
    }
    HttpResponse<String> r = get(port, "/api/analysis/x");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
    assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(r.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/json");
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).hasValue("15");
    assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
    assertThat(r.headers().firstValue("X-RateLimit-Reset")).hasValue("30");
    assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"analysis\";q=15;w=30");
    assertThat(r.headers().firstValue("RateLimit")).hasValue("\"analysis\";r=0;t=2");
    assertThat(r.body()).isEqualTo(
        "{\"error\":\"too many requests\",\"retryAfter\":2,\"retryAfterMs\":2000,"
            + "\"rule\":\"analysis\"}");
    HttpResponse<String> page = get(port, "/api/analysis/x", "Accept", "text/html,*/*;q=0.8");
    assertThat(page.statusCode()).isEqualTo(429);
    assertThat(page.body()).contains("<b>analysis</b>", "wait 2 seconds");
    assertThat(get(port, "/healthz").statusCode()).isEqualTo(200);
  }

  /**
   * Issue 20, item 2: path spellings that the container resolves to a limited path (a path
   * parameter, dot segments, doubled slashes, an encoded letter) are counted by that path's route.
   */
  @Test
  void issue20_spellingsOfALimitedPath_areCountedByItsRoute() throws Exception {
    int port = serve(policy(String.join("\n",
        "rules:",
        "  strict: {limits: [{type: fixed-window, limit: 1, window: 1m}]}",
        "routes:",
        "  - {paths: [/strict/**], rules: [strict]}")), Store.memory(() -> 0L, 100));
    assertThat(get(port, "/strict/a").statusCode()).isEqualTo(200);
    for (String spelling : List.of("/strict;x=1/a", "/x/../strict/a", "//strict//a",
        "/%73trict/a", "/strict/./a")) {
      assertThat(get(port, spelling).statusCode()).as(spelling).isIn(429, 400, 404);
    }
  }

  @Test
  void authenticatedUser_isKeyedByTheUser() throws Exception {
    int port = serve(policy(String.join("\n",
        "dimensions: {user: principal}",
        "rules:",
        "  me: {key: user, sharedBucket: anonymous,",
        "       limits: [{type: fixed-window, limit: 2, window: 1m}]}",
        "routes:",
        "  - {paths: [/api/me/**], rules: [me]}")), Store.memory(() -> 0L, 100));
    assertThat(get(port, "/api/me/x", "X-Test-User", "alice").body()).isEqualTo("ok me alice");
    assertThat(get(port, "/api/me/x", "X-Test-User", "alice").statusCode()).isEqualTo(200);
    assertThat(get(port, "/api/me/x", "X-Test-User", "alice").statusCode()).isEqualTo(429);
    assertThat(get(port, "/api/me/x", "X-Test-User", "bob").statusCode()).isEqualTo(200);
    assertThat(get(port, "/api/me/x").statusCode()).isEqualTo(200);
    assertThat(get(port, "/api/me/x").statusCode()).isEqualTo(200);
    assertThat(get(port, "/api/me/x").statusCode()).as("the anonymous bucket").isEqualTo(429);
  }

  @Test
  void xForwardedFor_isHonouredOnlyFromTrustedProxies() throws Exception {
    String rules = "\nrules: {api: {limits: [{type: fixed-window, limit: 1, window: 1m}]}}\n"
        + "routes: [{rules: [api]}]\n";
    int port = serve(policy("trust: {proxies: [127.0.0.1]}" + rules), Store.memory(() -> 0L, 100));
    assertThat(get(port, "/a", "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
    assertThat(get(port, "/a", "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(200);
    assertThat(get(port, "/a", "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(429);
    running.close();
    port = serve(policy("trust: {proxies: [10.0.0.0/8]}" + rules), Store.memory(() -> 0L, 100));
    assertThat(get(port, "/a", "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
    assertThat(get(port, "/a", "X-Forwarded-For", "203.0.113.2").statusCode())
        .as("an untrusted peer's header is ignored: both share the peer's bucket").isEqualTo(429);
  }

  @Test
  void policyReload_takesEffectWithoutRestart() throws Exception {
    Path file = dir.resolve("policy.yaml");
    String policy = "rules: {api: {limits: [{type: fixed-window, limit: LIMIT, window: 1h}]}}\n"
        + "routes: [{rules: [api]}]\n";
    Files.writeString(file, policy.replace("LIMIT", "1"));
    running = start(SluiceFilter.builder().limiter(RateLimiter.of(Store.memory(() -> 0L, 100)))
        .policyFile(file).reloadInterval(Duration.ZERO).environment(Map.of()).build());
    int port = running.port();
    assertThat(get(port, "/a").statusCode()).isEqualTo(200);
    assertThat(get(port, "/a").statusCode()).isEqualTo(429);
    Files.writeString(file, policy.replace("LIMIT", "100"));
    assertThat(get(port, "/a").statusCode()).isEqualTo(200);
    Files.writeString(file, "rules: {api: nope}\n");
    assertThat(get(port, "/a").statusCode()).as("an invalid file keeps the policy").isEqualTo(200);
  }

  @Test
  void remoteStore_decidesAsynchronously_andDispatchesBack() throws Exception {
    Store memory = Store.memory(() -> 0L, 100);
    List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
    Store remote = new FailingStore() {
      @Override
      public boolean isLocal() {
        return false;
      }

      @Override
      public CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity,
          long cost, Verdicts out) {
        return CompletableFuture.supplyAsync(() -> {
          threads.add(Thread.currentThread().getName());
          memory.evaluate(rules, identity, cost, out);
          return out;
        }, CompletableFuture.delayedExecutor(20, java.util.concurrent.TimeUnit.MILLISECONDS,
            r -> new Thread(r, "store").start()));
      }
    };
    int port = serve(policy("rules: {api: {limits: [{type: fixed-window, limit: 1, window: 1m}]}}"
        + "\nroutes: [{rules: [api]}]\n"), remote);
    HttpResponse<String> ok = get(port, "/a");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("ok api -");
    assertThat(ok.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
    assertThat(get(port, "/a").statusCode()).isEqualTo(429);
    assertThat(threads).containsExactly("store", "store");
  }

  @Test
  void storeOutage_onFailClosedRule_is503_withCors_andNoLimitHeaders() throws Exception {
    int port = serve(policy(String.join("\n",
        "rules: {pay: {onStoreError: deny, limits: [{type: fixed-window, limit: 5, window: 1m}]}}",
        "routes: [{rules: [pay]}]",
        "cors: {allowOrigins: [https://app.example.com]}")), new FailingStore());
    HttpResponse<String> r = get(port, "/pay", "Origin", "https://app.example.com");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).startsWith("{\"error\":\"rate limiter unavailable\",\"retryAfter\":");
    assertThat(r.headers().firstValue("Access-Control-Allow-Origin"))
        .hasValue("https://app.example.com");
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).isEmpty();
  }
}
