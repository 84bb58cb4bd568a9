package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import dev.sluice.server.ChallengeClient;
import dev.sluice.server.Closer;
import dev.sluice.server.Log;
import dev.sluice.server.ServeOptions;
import dev.sluice.server.SluiceServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fleet of two gateways on one real redis-server, sharing one key file: a puzzle solved on
 * one is refused when its answer is sent to the other (its nonce is spent in Redis), the
 * solve's reset of the count is seen by both, and either accepts the other's clearance.
 */
class ChallengeRedisIntegrationTests {

  @TempDir
  Path dir;

  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private final Closer open = new Closer();

  @AfterEach
  void stop() throws Exception {
    open.close();
  }

  private SluiceServer serve(int redisPort) throws Exception {
    Files.writeString(dir.resolve("fleet.keys"), "# shared by every gateway of the fleet\n"
        + "ZmxlZXQgY2hhbGxlbmdlIGtleSBvZiB0aGUgdGVzdCAwMTIzNDU2Nzg5\n");
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, String.join("\n",
        "rules:",
        "  pages:",
        "    limits: [{type: sliding-log, limit: 1, window: 1h}]",
        "    action: challenge",
        "    difficulty: 10",
        "routes:",
        "  - {name: docs, paths: [/docs/**], rules: [pages]}",
        "challenge:",
        "  keyFile: fleet.keys",
        "store:",
        "  uri: redis://127.0.0.1:" + redisPort,
        "  deadline: 2s",
        "  startupWait: 30s",
        ""));
    SluiceServer s = SluiceServer.start(new ServeOptions(file,
        new InetSocketAddress("127.0.0.1", 0), null, null, null, Duration.ofSeconds(1), 1),
        Map.of(), new Log(new PrintStream(log, true, StandardCharsets.UTF_8)));
    open.add(s::close);
    return s;
  }

  @Test
  void answerSolvedOnOneGateway_isRefusedOnTheOther_andAClearancesBudgetIsShared() throws Exception {
    RedisProcess redis = RedisProcess.start();
    open.add(redis);
    SluiceServer a = serve(redis.port);
    SluiceServer b = serve(redis.port);
    ChallengeClient onA = new ChallengeClient(a.port());
    ChallengeClient onB = new ChallengeClient(b.port());

    assertThat(onA.get("/docs/1", null, null).statusCode()).isEqualTo(200);
    assertThat(onB.get("/docs/2", null, null).statusCode())
        .as("the count is Redis's: B refuses the second").isEqualTo(429);
    HttpResponse<String> page = onA.get("/docs/2", null, null);
    String answer = ChallengeClient.solve(page.body());
    HttpResponse<String> passed = onA.get("/docs/2", null, "sluice-challenge=" + answer);
    assertThat(passed.statusCode()).isEqualTo(200);
    String clearance = ChallengeClient.setCookie(passed, "sluice-clearance-pages");
    assertThat(clearance).isNotNull();

    // The clearance's budget (the rule's own limit: one request) is one count in Redis: B
    // spends it, and A then finds it spent.
    assertThat(onB.send("/docs/3", "*/*", null, "sluice-clearance-pages=" + clearance)
        .statusCode()).as("A's clearance on B").isEqualTo(200);
    HttpResponse<String> replayed = onB.get("/docs/4", null, "sluice-challenge=" + answer);
    assertThat(replayed.statusCode()).as("the same answer again, on B").isEqualTo(403);
    assertThat(replayed.body()).contains("<title>Check already used</title>");
    HttpResponse<String> again = onA.get("/docs/4", null, "sluice-challenge=" + answer);
    assertThat(again.statusCode()).as("and on A").isEqualTo(403);
    assertThat(b.metrics().challenges("pages", "replayed")).isEqualTo(1);
    assertThat(a.metrics().challenges("pages", "solved")).isEqualTo(1);

    assertThat(onA.send("/docs/5", "*/*", null, "sluice-clearance-pages=" + clearance)
        .statusCode()).as("spent on B, refused on A").isEqualTo(429);
    assertThat(b.metrics().challenges("pages", "cleared")).isEqualTo(1);
    assertThat(a.metrics().challenges("pages", "spent")).isEqualTo(1);
  }
}
