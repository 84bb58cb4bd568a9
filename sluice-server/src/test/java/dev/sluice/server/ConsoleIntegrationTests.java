package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's HTTP side against a real server, without a browser: the bound on event streams
 * under 1,000 clients, bad input, the headers that keep the page to itself, and the Redis store
 * feeding the same live view as the memory store.
 */
class ConsoleIntegrationTests {

  static final String POLICY = String.join("\n",
      "rules:",
      "  login:",
      "    key: ip",
      "    limits: [{type: fixed-window, limit: 2, window: 1h}]",
      "    ban: 10m",
      "routes:",
      "  - {name: login, paths: [/login/**], rules: [login]}",
      "");

  @TempDir
  Path dir;

  final ServedPolicy served = new ServedPolicy();
  SluiceServer server;

  @AfterEach
  void stop() throws Exception {
    served.close();
  }

  void serve(String storeLines, String... extra) throws Exception {
    server = served.start(dir, POLICY + storeLines, extra);
  }

  HttpResponse<String> admin(String method, String path, String... headers) throws Exception {
    return served.admin(method, path, headers);
  }

  int gateway(String path) throws Exception {
    return served.gateway(path);
  }

  static String statusLine(InputStream in) throws Exception {
    StringBuilder sb = new StringBuilder();
    for (int c = in.read(); c >= 0 && c != '\r'; c = in.read()) {
      sb.append((char) c);
    }
    return sb.toString();
  }

  void await(String what, java.util.concurrent.Callable<Boolean> condition) throws Exception {
    long end = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (!condition.call()) {
      assertThat(System.nanoTime()).as(what).isLessThan(end);
      Thread.sleep(20);   // polling an eventual condition with a deadline, not timing
    }
  }

  @Test
  void aThousandEventStreamClients_sixteenServed_theRest503_andTheSlotsFreeWhenTheyGo()
      throws Exception {
    serve("");
    List<Socket> sockets = new ArrayList<>();
    try {
      // Each asks to close after its answer: a 503 does not hold one of the listener's
      // connections (128 at most; the cap has its own test).
      for (int i = 0; i < 1000; i++) {
        Socket s = new Socket("127.0.0.1", server.adminPort());
        s.getOutputStream().write(("GET /v1/console/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        sockets.add(s);
      }
      int ok = 0;
      int unavailable = 0;
      for (Socket s : sockets) {
        String line = statusLine(s.getInputStream());
        if (line.equals("HTTP/1.1 200 OK")) {
          ok++;
        } else if (line.equals("HTTP/1.1 503 Service Unavailable")) {
          unavailable++;
        }
      }
      assertThat(ok).isEqualTo(16);
      assertThat(unavailable).isEqualTo(984);
      HttpResponse<String> extra = admin("GET", "/v1/console/events");
      assertThat(extra.statusCode()).isEqualTo(503);
      assertThat(extra.headers().firstValue("retry-after")).contains("10");
      assertThat(extra.body()).contains("too many event streams: 16 console pages are open");
      assertThat(admin("GET", "/v1/console/snapshot").body())
          .contains("\"streams\":{\"open\":16,\"max\":16,\"refused\":985,\"cut\":0,\"acks\":0}");
      assertThat(admin("GET", "/healthz").statusCode()).as("the listener still answers")
          .isEqualTo(200);
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
    await("every stream ends once its client has gone",
        () -> admin("GET", "/v1/console/snapshot").body().contains("\"open\":0"));
    HttpResponse<InputStream> again = served.client.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + server.adminPort() + "/v1/console/events")).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.headers().firstValue("content-type")).contains("text/event-stream; "
        + "charset=utf-8");
    again.body().close();
  }

  @Test
  void badInput_wrongToken_keysThatDoNotExist_badParameters() throws Exception {
    Path token = dir.resolve("admin.token");
    Files.writeString(token, "console-token-0123456789\n");
    serve("", "--admin-token-file", token.toString());
    String auth = "Bearer console-token-0123456789";
    for (String path : List.of("/v1/console/snapshot", "/v1/console/events",
        "/v1/console/history", "/v1/console/audit", "/v1/console/reloads")) {
      assertThat(admin("GET", path, "Authorization", "Bearer wrong-token-0123456789")
          .statusCode()).as(path).isEqualTo(401);
    }
    HttpResponse<String> page = admin("GET", "/", "Accept", "text/html");
    assertThat(page.statusCode()).as("the page itself holds no data").isEqualTo(200);
    assertThat(page.body()).contains("<script src=\"/console/console.js\" defer></script>")
        .doesNotContain("<script>").doesNotContain("style=");
    assertThat(page.headers().firstValue("content-security-policy")).contains(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    assertThat(page.headers().firstValue("x-content-type-options")).contains("nosniff");
    assertThat(page.headers().firstValue("set-cookie")).isEmpty();
    assertThat(admin("GET", "/console/auth").body()).startsWith("{\"token\":true,");
    assertThat(admin("GET", "/").body()).as("curl still gets the index")
        .startsWith("sluice admin ").contains("GET /v1/console/events");
    assertThat(admin("GET", "/console/console.js").headers().firstValue("content-type"))
        .contains("text/javascript; charset=utf-8");
    assertThat(admin("GET", "/console/../pom.xml").statusCode()).isEqualTo(404);
    assertThat(admin("GET", "/console/nope.js").statusCode()).isEqualTo(404);

    HttpResponse<String> res = admin("GET", "/v1/console/history?resolution=5s",
        "Authorization", auth);
    assertThat(res.statusCode()).isEqualTo(400);
    assertThat(res.body()).contains("\"field\":\"resolution\"").contains("\\\"5s\\\"")
        .contains("1s (15 minutes) or 1m (24 hours)");
    assertThat(admin("GET", "/v1/console/snapshot?x=1", "Authorization", auth).body())
        .contains("\"field\":\"query\"");
    assertThat(admin("POST", "/v1/console/snapshot", "Authorization", auth).statusCode())
        .isEqualTo(405);
    assertThat(admin("GET", "/v1/console/nope", "Authorization", auth).statusCode())
        .isEqualTo(404);

    // Admin actions on a key that does not exist: answered, audited, nothing changed.
    HttpResponse<String> unban = admin("DELETE", "/v1/bans/login/203.0.113.99",
        "Authorization", auth, "X-Sluice-Actor", "bob");
    assertThat(unban.statusCode()).isEqualTo(404);
    assertThat(unban.body()).contains("\"error\":\"not banned\"");
    HttpResponse<String> reset = admin("POST", "/v1/keys/login/203.0.113.99/reset",
        "Authorization", auth, "X-Sluice-Actor", "bob");
    assertThat(reset.statusCode()).isEqualTo(200);
    assertThat(reset.body()).contains("\"hadState\":false");
    assertThat(admin("DELETE", "/v1/bans/nope/203.0.113.99", "Authorization", auth)
        .statusCode()).isEqualTo(404);
    String audit = admin("GET", "/v1/console/audit", "Authorization", auth).body();
    assertThat(audit).contains("\"action\":\"reset\",\"rule\":\"login\",\"key\":"
        + "\"203.0.113.99\",\"outcome\":\"already fresh\",\"status\":200")
        .contains("\"outcome\":\"not banned\",\"status\":404").contains("\"actor\":\"bob\"")
        .contains("\"outcome\":\"failed: 404\"");
  }

  @Test
  void redisStore_refusalsAndBansReachTheLiveView() throws Exception {
    RedisProcess redis = RedisProcess.start();
    served.open.add(redis);
    serve(String.join("\n", "store:", "  uri: redis://127.0.0.1:" + redis.port,
        "  deadline: 2s", "  startupWait: 30s", ""));
    assertThat(List.of(gateway("/login/a"), gateway("/login/a"), gateway("/login/a")))
        .containsExactly(200, 200, 429);
    HttpResponse<InputStream> events = served.client.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + server.adminPort() + "/v1/console/events")).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    try (BufferedReader r = new BufferedReader(new InputStreamReader(events.body(),
        StandardCharsets.UTF_8))) {
      String line;
      do {
        line = r.readLine();
      } while (line != null && !(line.startsWith("data: ") && line.contains("\"bans\":[{")));
      assertThat(line).as("a tick listing the ban").isNotNull()
          .contains("\"store\":{\"store\":\"redis://127.0.0.1:" + redis.port + "\","
              + "\"ready\":true,\"connected\":true,\"circuit\":\"closed\"")
          .contains("\"refused\":{\"login\":{\"count\":1,\"keys\":[{\"rule\":\"login\","
              + "\"key\":\"127.0.0.1\"")
          .contains("\"refusedBy\":\"ban\"");
    }
    String history = admin("GET", "/v1/console/history?resolution=1m").body();
    assertThat(history).contains("\"rules\":{\"login\":{\"allowed\":[");
  }
}
