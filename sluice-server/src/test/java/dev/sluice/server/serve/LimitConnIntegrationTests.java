package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.CurlClient;
import dev.sluice.gateway.Fixtures;
import dev.sluice.gateway.RawHttp;
import dev.sluice.gateway.ScriptedApp;
import dev.sluice.gateway.WsClient;
import dev.sluice.server.Closer;
import dev.sluice.server.Log;
import dev.sluice.server.ServeOptions;
import dev.sluice.server.SluiceServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * nginx's {@code limit_conn} in the gateway (issue 22): a cap on one client's requests in flight,
 * held by raw-socket clients against a real upstream that answers only when told, counting what
 * reached it; leases go back when responses end and when clients vanish mid-request; clients
 * that keep sending or half-close still get their refusal.
 */
class LimitConnIntegrationTests {

  @TempDir
  Path dir;

  private final Closer open = new Closer();
  private ScriptedApp app;
  private SluiceServer server;

  @AfterEach
  void stop() throws Exception {
    open.close();
  }


  private SluiceServer serve() throws Exception {
    app = open.add(new ScriptedApp());
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, String.join("\n",
        "rules:",
        "  conn: {limits: [{type: concurrency, max: 55}]}",
        "  one: {limits: [{type: concurrency, max: 1}]}",
        "routes:",
        "  - {name: one, paths: [/one], rules: [one]}",
        "  - {name: all, rules: [conn]}",
        ""));
    server = open.add(SluiceServer.start(new ServeOptions(file, new InetSocketAddress(
        "127.0.0.1", 0), app.uri(), null, null, Duration.ofHours(1), 2), Map.of(),
        new Log(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))));
    return server;
  }

  /** Polls {@code condition} for up to 10 s: an eventual effect, never a timing. */
  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 10 s: " + what);
      }
      Thread.sleep(10);
    }
  }

  private RawHttp slowRequest(int i) throws Exception {
    RawHttp c = new RawHttp(server.port());
    c.send("GET /slow/" + i + " HTTP/1.1\r\nHost: app\r\n\r\n");
    return c;
  }

  private static boolean answered(RawHttp c) {
    try {
      return c.socket.getInputStream().available() > 0;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  @Test
  void sixtySlowRequests_capOf55_55ReachTheUpstream_5AreRefused_andVanishedClientsGiveBack()
      throws Exception {
    serve();
    List<RawHttp> clients = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      clients.add(open.add(slowRequest(i)));
    }
    await("55 requests at the upstream", () -> app.slowArrived.get() == 55);
    await("5 answers", () -> clients.stream().filter(LimitConnIntegrationTests::answered)
        .count() == 5);
    for (RawHttp c : clients) {
      if (answered(c)) {
        String r = c.readResponse();
        assertThat(RawHttp.status(r)).isEqualTo(429);
        assertThat(r).contains("\"rule\":\"conn\"");
        assertThat(r.toLowerCase(java.util.Locale.ROOT)).contains("retry-after: 1\r\n");
      }
    }
    assertThat(app.slowArrived.get()).isEqualTo(55);
    assertThat(server.metrics().inFlight("conn")).isEqualTo(55);

    // Misbehaving clients while the cap is full: one keeps sending its body after the refusal,
    // one half-closes after its request. Each gets the refusal the server meant to send.
    try (RawHttp pushy = new RawHttp(server.port()); RawHttp half = new RawHttp(server.port())) {
      pushy.send("POST /slow/pushy HTTP/1.1\r\nHost: app\r\nContent-Length: 262144\r\n\r\n");
      byte[] chunk = new byte[16384];
      for (int i = 0; i < 16; i++) {
        assertThat(pushy.send(chunk)).isTrue();
      }
      assertThat(RawHttp.status(pushy.readResponse())).isEqualTo(429);
      half.send("GET /slow/half HTTP/1.1\r\nHost: app\r\n\r\n");
      half.socket.shutdownOutput();
      assertThat(RawHttp.status(half.readResponse())).isEqualTo(429);
      assertThat(half.closedByServer()).isTrue();
    }

    // Every client vanishes mid-request (a reset: a crashed or killed client; a FIN alone is a
    // half-close, whose answer is still owed): the count returns to 0, and 55 more get through.
    for (RawHttp c : clients) {
      c.socket.setSoLinger(true, 0);
      c.close();
    }
    await("no lease held", () -> server.metrics().inFlight("conn") == 0);
    List<RawHttp> again = new ArrayList<>();
    for (int i = 0; i < 55; i++) {
      again.add(open.add(slowRequest(100 + i)));
    }
    await("55 more at the upstream", () -> app.slowArrived.get() == 110);
    RawHttp over = open.add(slowRequest(200));
    assertThat(RawHttp.status(over.readResponse())).isEqualTo(429);
    app.release();
    for (RawHttp c : again) {
      assertThat(RawHttp.status(c.readResponse())).isEqualTo(200);
    }
    await("leases back after the responses", () -> server.metrics().inFlight("conn") == 0);
  }

  @Test
  void aWebSocketHoldsItsLease_forTheConnectionsLife() throws Exception {
    dev.sluice.core.policy.Policy p = dev.sluice.core.policy.Policy.builder()
        .rule(dev.sluice.core.Rule.builder("sockets").concurrency(1, Duration.ofMinutes(1))
            .build())
        .route(dev.sluice.core.policy.Route.builder("ws").websocket(true).rule("sockets")
            .build()).build();
    try (Fixtures.Harness h = new Fixtures.Harness(Fixtures.config(p))) {
      WsClient first = WsClient.connect(h.ws("/socket"));
      assertThat(first.send("x")).isTrue();
      assertThat(first.next()).isEqualTo("x");
      assertThat(h.limiter.store().leases("sockets:127.0.0.1")).isEqualTo(1);
      WsClient second = WsClient.connect(h.ws("/socket"));
      assertThat(second.closeCode()).isEqualTo(1013);              // the cap of one, refused
      first.ws.sendClose(1000, "bye").get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(first.closeCode()).isEqualTo(1000);
      await("the lease back", () -> h.limiter.store().leases("sockets:127.0.0.1") == 0);
      WsClient third = WsClient.connect(h.ws("/socket"));
      assertThat(third.send("y")).isTrue();
      assertThat(third.next()).isEqualTo("y");
      third.ws.sendClose(1000, "bye").get(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  @Test
  void aCapOfOne_isGivenBackWhenEachResponseEnds_onHttp11AndHttp2() throws Exception {
    serve();
    try (RawHttp c = new RawHttp(server.port())) {
      for (int i = 0; i < 3; i++) {
        c.send("GET /one HTTP/1.1\r\nHost: app\r\n\r\n");
        assertThat(RawHttp.status(c.readResponse())).isEqualTo(200);
      }
    }
    String url = "http://127.0.0.1:" + server.port() + "/one";
    for (int i = 0; i < 3; i++) {
      assertThat(CurlClient.run("--http2-prior-knowledge", "-w",
          " %{http_code} %{http_version}", url)).isEqualTo("ok 200 2");
    }
    assertThat(app.count("GET /one")).isEqualTo(6);
    await("no lease held", () -> server.metrics().inFlight("one") == 0);
  }
}
