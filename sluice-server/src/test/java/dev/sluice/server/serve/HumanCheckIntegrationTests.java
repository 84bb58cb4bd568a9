package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.CurlClient;
import dev.sluice.gateway.ScriptedApp;
import dev.sluice.gateway.SiteVerifyServer;
import dev.sluice.redis.RedisProcess;
import dev.sluice.server.Closer;
import dev.sluice.server.Log;
import dev.sluice.server.ServeOptions;
import dev.sluice.server.SluiceServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Human checks bound to the request (issue 22, seed 001's Turnstile): {@code sluice serve} in
 * front of a real upstream verifies each token against a real HTTP server speaking siteverify, in
 * the request it protects, over HTTP/1.1 and HTTP/2, and refuses a replayed token on every
 * gateway sharing a Redis.
 */
class HumanCheckIntegrationTests {

  private static final String SECRET = "0x4AAAAAAAtest-secret";

  @TempDir
  Path dir;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private final Closer open = new Closer();
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private SiteVerifyServer verify;
  private ScriptedApp app;

  @BeforeEach
  void start() throws Exception {
    verify = open.add(new SiteVerifyServer());
    app = open.add(new ScriptedApp());
    Files.writeString(dir.resolve("turnstile.key"), SECRET + "\n");
  }

  @AfterEach
  void stop() throws Exception {
    open.close();
  }


  private SluiceServer serve(String storeUri) throws Exception {
    Path file = dir.resolve("policy-" + open.size() + ".yaml");
    Files.writeString(file, String.join("\n",
        "humanChecks:",
        "  turnstile:",
        "    secretFile: turnstile.key",
        "    verifyUrl: " + verify.uri(),
        "    hostname: app.example.com",
        "    action: login",
        "    deadline: 500ms",
        "    onError: deny",
        "    limits: [{type: fixed-window, limit: 12, window: 60s}]",
        "  json:",
        "    provider: turnstile",
        "    secretFile: turnstile.key",
        "    verifyUrl: " + verify.uri(),
        "    token: json",
        "    field: token",
        "  header:",
        "    provider: turnstile",
        "    secretFile: turnstile.key",
        "    verifyUrl: " + verify.uri(),
        "    token: header",
        "    field: X-Turnstile-Token",
        "routes:",
        "  - {name: signin, methods: [POST], paths: [/login], humanCheck: turnstile}",
        "  - {name: api, methods: [POST], paths: [/api/login], humanCheck: json}",
        "  - {name: header, paths: [/h/login], humanCheck: header}",
        storeUri == null ? "" : "store: {uri: '" + storeUri + "', deadline: 2s, "
            + "startupWait: 30s}",
        ""));
    return open.add(SluiceServer.start(new ServeOptions(file, new InetSocketAddress("127.0.0.1",
        0), app.uri(), null, null, Duration.ofHours(1), 1), Map.of(),
        new Log(new PrintStream(log, true, StandardCharsets.UTF_8))));
  }

  private HttpResponse<String> post(SluiceServer s, String path, String contentType,
      String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port()
        + path)).timeout(Duration.ofSeconds(10)).header("Content-Type", contentType)
        .POST(HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> form(SluiceServer s, String token) throws Exception {
    return post(s, "/login", "application/x-www-form-urlencoded",
        "user=alice&cf-turnstile-response=" + token + "&password=x");
  }

  @Test
  void formToken_verifiedInTheRequest_thenForwardedWithItsBody_andRefusedWhenReplayed()
      throws Exception {
    SluiceServer s = serve(null);
    HttpResponse<String> ok = form(s, "good-1");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("ok");
    assertThat(app.requests).containsExactly(
        "POST /login user=alice&cf-turnstile-response=good-1&password=x");
    assertThat(verify.calls).hasSize(1);
    Map<String, String> call = verify.calls.get(0);
    assertThat(call).containsEntry("secret", SECRET).containsEntry("response", "good-1")
        .containsEntry("remoteip", "127.0.0.1")
        .containsEntry("content-type", "application/x-www-form-urlencoded");
    HttpResponse<String> replay = form(s, "good-1");
    assertThat(replay.statusCode()).isEqualTo(403);
    assertThat(replay.body()).isEqualTo("{\"error\":\"forbidden\",\"reason\":\"human check "
        + "replayed\"}");
    assertThat(verify.calls).hasSize(1);                 // refused without asking again
    assertThat(app.requests).hasSize(1);
    assertThat(s.metrics().humanChecks("turnstile", "passed")).isEqualTo(1);
    assertThat(s.metrics().humanChecks("turnstile", "replayed")).isEqualTo(1);
  }

  @Test
  void failedWrongHostWrongActionStaleOrMissing_are403_neverForwarded() throws Exception {
    SluiceServer s = serve(null);
    for (String token : List.of("bad-1", "otherhost-1", "otheraction-1", "stale-1")) {
      HttpResponse<String> r = form(s, token);
      assertThat(r.statusCode()).as(token).isEqualTo(403);
      assertThat(r.body()).as(token).contains("human check failed");
    }
    HttpResponse<String> none = post(s, "/login", "application/x-www-form-urlencoded",
        "user=alice&password=x");
    assertThat(none.statusCode()).isEqualTo(403);
    assertThat(none.body()).contains("human check required");
    HttpResponse<String> twice = post(s, "/login", "application/x-www-form-urlencoded",
        "cf-turnstile-response=good-a&cf-turnstile-response=good-b");
    assertThat(twice.statusCode()).isEqualTo(403);
    assertThat(app.requests).isEmpty();
    assertThat(verify.tokens()).containsExactly("bad-1", "otherhost-1", "otheraction-1",
        "stale-1");
    assertThat(s.metrics().humanChecks("turnstile", "failed")).isEqualTo(4);
    assertThat(s.metrics().humanChecks("turnstile", "missing")).isEqualTo(2);
  }

  @Test
  void verifierSlowerThanTheDeadline_isDecidedByOnError() throws Exception {
    SluiceServer s = serve(null);
    HttpResponse<String> r = form(s, "slow-1");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
    assertThat(app.requests).isEmpty();
    assertThat(s.metrics().humanChecks("turnstile", "error")).isEqualTo(1);
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("human check could not be verified")
        .contains("no answer within 500 ms").doesNotContain("slow-1");
  }

  @Test
  void jsonAndHeaderTokens_andTheChecksOwnLimit() throws Exception {
    SluiceServer s = serve(null);
    assertThat(post(s, "/api/login", "application/json",
        "{\"user\":\"alice\",\"token\":\"good-json\"}").statusCode()).isEqualTo(200);
    assertThat(post(s, "/api/login", "application/json", "{\"user\":\"alice\"}").statusCode())
        .isEqualTo(403);
    HttpResponse<String> h = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + s.port() + "/h/login")).header("X-Turnstile-Token", "good-header").GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(h.statusCode()).isEqualTo(200);
    assertThat(app.requests).containsExactly("POST /api/login {\"user\":\"alice\",\"token\":"
        + "\"good-json\"}", "GET /h/login");
    for (int i = 0; i < 12; i++) {                       // the signin check's 12 per minute
      assertThat(form(s, "bad-" + i).statusCode()).isEqualTo(403);
    }
    HttpResponse<String> limited = form(s, "good-13");
    assertThat(limited.statusCode()).isEqualTo(429);
    assertThat(limited.body()).contains("\"rule\":\"humanCheck:turnstile\"");
    assertThat(verify.tokens()).doesNotContain("good-13");
  }

  /**
   * Issue 30's hang: a header token with the body in the head's packet was verified and then
   * never forwarded. Now the body goes on whatever the packet boundaries: one packet, split at
   * every kind of place, chunked, and as an HTTP/2 stream.
   */
  @Test
  void headerToken_theBodyGoesOn_whateverThePacketBoundaries() throws Exception {
    SluiceServer s = serve(null);
    String body = "user=alice&password=x";
    List<String> sent = new java.util.ArrayList<>();
    int n = 0;
    for (String framing : List.of("length", "chunked")) {
      String token = "good-packet-" + framing + "-" + n++;
      String request = "POST /h/login HTTP/1.1\r\nHost: x\r\nX-Turnstile-Token: " + token
          + "\r\nContent-Type: application/x-www-form-urlencoded\r\n"
          + (framing.equals("length") ? "Content-Length: " + body.length() + "\r\n\r\n" + body
              : "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(body.length())
                  + "\r\n" + body + "\r\n0\r\n\r\n");
      int headEnd = request.indexOf("\r\n\r\n") + 4;
      // One packet; the head's last byte alone; the body's first byte with the head; mid-body.
      for (int split : new int[] {request.length(), headEnd - 1, headEnd + 1,
          headEnd + (request.length() - headEnd) / 2}) {
        String t = token + "-" + split;
        String r = request.replace(token, t);
        int at = split + (t.length() - token.length());
        try (dev.sluice.gateway.RawHttp c = new dev.sluice.gateway.RawHttp(s.port())) {
          c.send(r.substring(0, Math.min(at, r.length())));
          if (at < r.length()) {
            Thread.sleep(50);
            c.send(r.substring(at));
          }
          String answer = c.readResponse();
          assertThat(answer).as(framing + " split at " + split).startsWith("HTTP/1.1 200");
        }
        sent.add("POST /h/login " + body);
      }
    }
    String h2 = dev.sluice.gateway.CurlClient.run("--http2-prior-knowledge", "-o", "/dev/null",
        "-w", "%{http_code} %{http_version}", "-H", "X-Turnstile-Token: good-h2-body",
        "--data", body, "http://127.0.0.1:" + s.port() + "/h/login");
    assertThat(h2).isEqualTo("200 2");
    sent.add("POST /h/login " + body);
    assertThat(app.requests).containsExactlyElementsOf(sent);
  }

  @Test
  void http2Streams_areVerifiedTheSameWay() throws Exception {
    SluiceServer s = serve(null);
    String url = "http://127.0.0.1:" + s.port() + "/login";
    String ok = CurlClient.run("--http2-prior-knowledge", "-w",
        "\n%{http_code} %{http_version}", "-d", "cf-turnstile-response=good-h2&user=bob", url);
    assertThat(ok).isEqualTo("ok\n200 2");
    String replay = CurlClient.run("--http2-prior-knowledge", "-w",
        "\n%{http_code}", "-d", "cf-turnstile-response=good-h2&user=bob", url);
    assertThat(replay).endsWith("human check replayed\"}\n403");
    String bad = CurlClient.run("--http2-prior-knowledge", "-w",
        "\n%{http_code}", "-d", "cf-turnstile-response=otherhost-h2", url);
    assertThat(bad).endsWith("\n403");
    assertThat(app.requests).containsExactly("POST /login cf-turnstile-response=good-h2&user=bob");
    assertThat(verify.tokens()).containsExactly("good-h2", "otherhost-h2");
  }

  @Test
  void aTokenVerifiedByOneGateway_isRefusedByAnotherOnTheSameRedis() throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    SluiceServer a = serve(redis.uri());
    SluiceServer b = serve(redis.uri());
    assertThat(form(a, "good-fleet").statusCode()).isEqualTo(200);
    HttpResponse<String> replay = form(b, "good-fleet");
    assertThat(replay.statusCode()).isEqualTo(403);
    assertThat(replay.body()).contains("human check replayed");
    assertThat(verify.tokens()).containsExactly("good-fleet");
    assertThat(form(b, "good-other").statusCode()).isEqualTo(200);
    assertThat(app.requests).hasSize(2);
  }
}
