package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One verdict for every protocol (issue 31): the same scenarios, each a short sequence of
 * requests, sent by curl over HTTP/1.1 and over HTTP/2 (h2c), each protocol against a gateway of
 * its own with fresh state; the verdicts the gateway records (once per request, the word the
 * access log and {@code sluice_requests_total} use) must be the expected ones, the same for both.
 */
class CrossProtocolVerdictIntegrationTests {

  private static final String POLICY = """
      version: 1
      trust: {hops: 1}
      deny: [192.0.2.66/32]
      rules:
        tight:
          limits: [{type: token-bucket, burst: 1, refill: 1, period: 1d}]
        watched:
          mode: shadow
          limits: [{type: token-bucket, burst: 1, refill: 1, period: 1d}]
        paced:
          # The second request comes well within 3 s, however busy the machine: it waits.
          limits: [{type: token-bucket, burst: 1, refill: 1, period: 3s}]
          delay: 5s
        invites:
          countStatus: [404]
          limits: [{type: cooldown, maxRetries: 1, retryWindow: 5m, cooldown: 1m}]
        inflight:
          limits: [{type: concurrency, max: 1}]
        pages:
          limits: [{type: token-bucket, burst: 1, refill: 1, period: 1d}]
          action: challenge
      humanChecks:
        signin:
          provider: turnstile
          secretFile: secret.txt
          token: header
          field: X-Token
      routes:
        - {name: health, paths: [/health], exempt: true}
        - {name: tight, paths: [/tight], rules: [tight]}
        - {name: watched, paths: [/watched], rules: [watched]}
        - {name: paced, paths: [/paced], rules: [paced]}
        - {name: invites, paths: ['/api/invites/*'], rules: [invites]}
        - {name: inflight, paths: ['/slow/**'], rules: [inflight]}
        - {name: pages, paths: [/pages], rules: [pages]}
        - {name: signin, paths: [/signin], humanCheck: signin}
        - {name: open, paths: ['/**']}
      gateway: {maxBodyBytes: 1000}
      """;

  @TempDir
  Path dir;

  @Test
  void everyScenario_getsTheSameVerdict_overHttp1AndHttp2() throws Exception {
    List<String> http1 = play("--http1.1");
    List<String> http2 = play("--http2-prior-knowledge");
    List<String> expected = List.of(
        "health exempt", "open allowed",
        "tight allowed", "tight refused",
        "watched allowed", "watched shadow-refused",
        "paced allowed", "paced delayed",
        "- denied",
        "invites allowed", "invites locked",
        "pages allowed", "pages challenged",
        "signin human-check-failed",
        "- invalid",
        "inflight over-concurrency", "inflight allowed");
    assertThat(http1).containsExactlyElementsOf(expected);
    assertThat(http2).containsExactlyElementsOf(expected);
  }

  /** The scenarios over curl's {@code protocol} flag; the verdicts recorded, in order. */
  private List<String> play(String protocol) throws Exception {
    Files.writeString(dir.resolve("secret.txt"), "0x4AAAAAAAtest\n");
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, POLICY);
    PolicyConfig c = PolicyLoader.load(file, Map.of()).config();
    try (ScriptedApp app = new ScriptedApp();
        Fixtures.Harness h = new Fixtures.Harness(c, app.uri(),
            dev.sluice.core.RateLimiter.of(dev.sluice.core.Store.memory(
                dev.sluice.core.Ticker.system(), 10_000)))) {
      String base = "http://127.0.0.1:" + h.gateway.port();
      List<String> done = new ArrayList<>();
      for (String path : List.of("/health", "/x", "/tight", "/tight", "/watched", "/watched",
          "/paced", "/paced")) {
        curl(protocol, base + path);
      }
      curl(protocol, base + "/x", "-H", "X-Forwarded-For: 192.0.2.66");
      curl(protocol, base + "/api/invites/wrong");
      curl(protocol, base + "/api/invites/wrong");
      curl(protocol, base + "/pages", "-H", "Accept: text/html");
      curl(protocol, base + "/pages", "-H", "Accept: text/html");
      curl(protocol, base + "/signin");
      curl(protocol, base + "/x", "--data-binary", "x".repeat(2000));
      // A request held by the app while a second one finds the cap of one full.
      CompletableFuture<String> held = CompletableFuture.supplyAsync(() -> {
        try {
          return curl(protocol, base + "/slow/a");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (app.slowArrived.get() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      curl(protocol, base + "/slow/b");
      app.release();
      held.get(20, TimeUnit.SECONDS);
      for (String v : h.events.verdicts) {
        done.add(v);
      }
      return done;
    }
  }

  private static String curl(String protocol, String url, String... more) throws Exception {
    List<String> args = new ArrayList<>(List.of(protocol, "-o", "/dev/null", "-w",
        "%{http_code}"));
    args.addAll(List.of(more));
    args.add(url);
    return CurlClient.run(args.toArray(String[]::new));
  }

}
