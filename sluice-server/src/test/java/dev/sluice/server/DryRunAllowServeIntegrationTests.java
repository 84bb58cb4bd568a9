package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice serve --dry-run} and a policy's {@code allow:} list, end to end with metrics. */
class DryRunAllowServeIntegrationTests {

  @TempDir
  Path dir;

  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private SluiceServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private void serve(String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("--listen", "127.0.0.1:0", "--admin",
        "127.0.0.1:0"));
    args.addAll(List.of(extra));
    server = SluiceServer.start(Main.parseServe(args, Map.of()), Map.of(),
        new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8)));
  }

  private int get(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + path)).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  private String admin(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort()
        + path)).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void dryRunFlag_seed000Loop_neverRefuses_countsShadowRefusals() throws Exception {
    serve("--dry-run");
    List<Integer> codes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      codes.add(get("/api/analysis/x"));
    }
    assertThat(codes).containsOnly(200);
    assertThat(Prom.canon(admin("/metrics")))
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"shadow_refused\"} 5");
    assertThat(admin("/v1/policy")).contains("\"mode\":\"shadow\"");
    assertThat(logBytes.toString(StandardCharsets.UTF_8))
        .contains("dry run (every rule in shadow mode)");
  }

  @Test
  void dryRunFlag_isParsed_onceOnly() throws Exception {
    assertThat(Main.parseServe(List.of("--dry-run", "--listen", "127.0.0.1:0"), Map.of())
        .dryRun()).isTrue();
    assertThat(Main.parseServe(List.of(), Map.of()).dryRun()).isFalse();
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> Main.parseServe(List.of("--dry-run", "--dry-run"), Map.of()))
        .hasMessage("--dry-run given twice (see sluice serve --help)");
  }

  @Test
  void allowList_skipsEveryRule_andIsCounted() throws Exception {
    Path p = dir.resolve("p.yaml");
    Files.writeString(p, String.join("\n",
        "allow: [127.0.0.1/32]",
        "rules:",
        "  backstop:",
        "    limits: [{type: fixed-window, limit: 1, window: 1m}]",
        "global: [backstop]",
        ""));
    serve("--config", p.toString());
    for (int i = 0; i < 5; i++) {
      assertThat(get("/x")).isEqualTo(200);
    }
    assertThat(Prom.canon(admin("/metrics")))
        .contains("sluice_allowlisted_total{kind=\"http\"} 5");
  }
}
