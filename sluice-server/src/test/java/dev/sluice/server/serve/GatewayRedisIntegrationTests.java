package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.DelayingProxy;
import dev.sluice.gateway.RawHttp;
import dev.sluice.gateway.WsClient;
import dev.sluice.redis.RedisProcess;
import dev.sluice.server.Closer;
import dev.sluice.server.Log;
import dev.sluice.server.ServeOptions;
import dev.sluice.server.SluiceServer;
import io.lettuce.core.RedisClient;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9 through {@code sluice serve} on real redis-server processes: a decision waiting on
 * Redis holds only its own request. The gateway runs as the command does (a policy file, its
 * store section, {@code --io-threads}); clients are real sockets.
 */
class GatewayRedisIntegrationTests {

  @TempDir
  Path dir;

  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private final Closer open = new Closer();
  private SluiceServer server;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    open.close();
  }


  /** Starts the gateway (demo upstream, no admin listener) on a policy with this store. */
  private SluiceServer serve(int ioThreads, int storePort, String... policy) throws Exception {
    Path file = dir.resolve("policy.yaml");
    List<String> lines = new ArrayList<>(List.of(policy));
    lines.addAll(List.of("store:", "  uri: redis://127.0.0.1:" + storePort, "  deadline: 2s",
        "  startupWait: 30s", ""));
    Files.writeString(file, String.join("\n", lines));
    server = SluiceServer.start(new ServeOptions(file, new InetSocketAddress("127.0.0.1", 0),
        null, null, null, Duration.ofSeconds(1), ioThreads), Map.of(),
        new Log(new PrintStream(log, true, StandardCharsets.UTF_8)));
    return server;
  }

  private static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  /**
   * One I/O thread; /pay is decided on a Redis that is then stopped (deadline 2 s, fail
   * closed). While that decision waits, other connections' requests to a route without rules
   * and to /healthz answer within 500 ms each (a blocked loop would hold them for the 2 s
   * deadline; under load they took up to 159 ms), for a whole second; then the waiting request
   * gets its rule's outcome: 503, the store being unavailable.
   */
  @Test
  void pendingDecisionOnAStoppedRedis_delaysNoOtherConnection_onOneIoThread() throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    serve(1, redis.port,
        "rules:",
        "  pay:",
        "    onStoreError: deny",
        "    limits: [{type: fixed-window, limit: 1000, window: 1m}]",
        "routes:",
        "  - {name: pay, paths: [/pay/**], rules: [pay]}",
        "  - {name: open, paths: [/open/**]}");
    int port = server.port();
    assertThat(statusOf(port, "/pay/warm")).as("decided by Redis").isEqualTo(200);

    redis.suspend();
    try {
      RawHttp waiting = open.add(new RawHttp(port));
      long start = System.nanoTime();
      waiting.send("GET /pay/1 HTTP/1.1\r\nHost: sluice\r\n\r\n");
      CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
        try {
          return waiting.readResponse();
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      long slowest = 0;
      int served = 0;
      while (millisSince(start) < 1000) {
        for (String path : List.of("/open/" + served, "/healthz")) {
          long t = System.nanoTime();
          assertThat(statusOf(port, path)).as(path).isEqualTo(200);
          slowest = Math.max(slowest, millisSince(t));
          served++;
        }
      }
      assertThat(answer).as("the /pay decision is still waiting on Redis").isNotDone();
      assertThat(slowest).as("slowest of %d other requests, ms", served).isLessThan(500);

      String response = answer.get(10, TimeUnit.SECONDS);
      long waited = millisSince(start);
      assertThat(RawHttp.status(response)).isEqualTo(503);
      assertThat(response).endsWith("{\"error\":\"rate limiter unavailable\",\"retryAfter\":1}");
      assertThat(waited).as("ms until the rule's outcome").isBetween(1900L, 5000L);
    } finally {
      redis.resume();
    }
  }

  /**
   * By default the Redis store puts a connection on each of the
   * gateway's I/O threads (epoll here when it loads, as in production), besides its shared one:
   * with 3 threads Redis sees 4, and requests are decided on them. Closing the server closes
   * them all before the loops stop, with no warning from the store or Lettuce ("Connection is
   * already closed" and the like). With {@code -Dsluice.redis.eventLoops=false}, one connection.
   */
  @Test
  void redisStore_hasAConnectionOnEachIoThread_andClosesThemQuietly() throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    System.setProperty("sluice.redis.eventLoops", "false");
    try {
      serve(3, redis.port, "routes:", "  - {name: open, paths: [/**]}");
    } finally {
      System.clearProperty("sluice.redis.eventLoops");
    }
    assertThat(clients(redis)).as("switched off: the store's own connection only").isEqualTo(1);
    server.close();
    server = null;
    serve(3, redis.port,
        "rules:",
        "  api:",
        "    onStoreError: deny",
        "    limits: [{type: token-bucket, burst: 100000, refill: 100000, period: 1m}]",
        "routes:",
        "  - {name: api, paths: [/api/**], rules: [api]}");
    assertThat(clients(redis)).as("one per I/O thread and a shared one").isEqualTo(4);
    for (int i = 0; i < 30; i++) {
      assertThat(statusOf(server.port(), "/api/" + i)).as("decided on Redis").isEqualTo(200);
    }
    List<String> warnings = new ArrayList<>();
    Handler handler = new Handler() {
      @Override
      public synchronized void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
          warnings.add(r.getLoggerName() + ": " + r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger.getLogger("").addHandler(handler);
    try {
      server.close();
      server = null;
    } finally {
      Logger.getLogger("").removeHandler(handler);
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (clients(redis) > 0 && System.nanoTime() < until) {
      RedisProcess.pause(10);
    }
    assertThat(clients(redis)).as("connections left after close").isZero();
    synchronized (handler) {
      assertThat(warnings).isEmpty();
    }
  }

  /** Connections on {@code redis}, without the one asking. */
  private static int clients(RedisProcess redis) {
    RedisClient client = RedisClient.create(redis.uri());
    try (var c = client.connect()) {
      return (int) c.sync().clientList().lines().filter(l -> l.startsWith("id=")).count() - 1;
    } finally {
      client.shutdown();
    }
  }

  /** A GET on a fresh connection; the status code. */
  private static int statusOf(int port, String path) throws Exception {
    try (RawHttp c = new RawHttp(port)) {
      c.send("GET " + path + " HTTP/1.1\r\nHost: sluice\r\nConnection: close\r\n\r\n");
      return RawHttp.status(c.readResponse());
    }
  }

  /**
   * 400 requests at once, each decided on a Redis 100 ms of round trip away (a proxy adding
   * 50 ms each way). Blocking calls on 16 threads would need 25 round trips, 2.5 s; here the
   * whole wave completes in a few round trips.
   */
  @Test
  void fourHundredConcurrentRequests_throughASlowNetwork_completeInAFewRoundTrips()
      throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    DelayingProxy proxy = open.add(new DelayingProxy(redis.port, Duration.ofMillis(50)));
    serve(0, proxy.port(),
        "rules:",
        "  api:",
        "    limits: [{type: token-bucket, burst: 100000, refill: 100000, period: 1m}]",
        "routes:",
        "  - {name: api, paths: [/api/**], rules: [api]}");
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    URI base = URI.create("http://127.0.0.1:" + server.port());
    wave(client, base, 400);  // opens the connections, which the client keeps
    // Best of three: the client's 400 requests and the gateway share two busy cores, and the
    // same waves with the in-memory store took 340-720 ms here; what is asserted is that no
    // wave queues behind Redis's round trips.
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      long start = System.nanoTime();
      List<Integer> codes = wave(client, base, 400);
      long took = millisSince(start);
      System.out.printf("400 concurrent requests, Redis 100 ms of round trip away: %d ms%n",
          took);
      assertThat(codes).hasSize(400).containsOnly(200);
      best = Math.min(best, took);
    }
    assertThat(best).as("ms for 400 concurrent requests (blocking: 2,500 on 16 threads)")
        .isLessThan(1000);
  }

  private static List<Integer> wave(HttpClient client, URI base, int n) throws Exception {
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(client.sendAsync(HttpRequest.newBuilder(base.resolve("/api/" + i))
          .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()));
    }
    List<Integer> codes = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> f : all) {
      codes.add(f.get(30, TimeUnit.SECONDS).statusCode());
    }
    return codes;
  }

  /**
   * WebSockets on the Redis store behind the slow network: two connections per address are
   * leased in Redis (the third is closed 1013, and a closed one's lease is given back), and
   * each action's decision takes a round trip while the messages after it wait: the upstream
   * gets every passed message in the order sent, and the fourth and fifth SEND are refused by
   * their limit of 3.
   */
  @Test
  void webSocket_leasesAndActionLimitsOnRedis_messagesInOrderWhileDecisionsWait()
      throws Exception {
    RedisProcess redis = open.add(RedisProcess.start());
    DelayingProxy proxy = open.add(new DelayingProxy(redis.port, Duration.ofMillis(50)));
    serve(1, proxy.port(),
        "rules:",
        "  connect:",
        "    limits: [{type: token-bucket, burst: 100, refill: 100, period: 1m}]",
        "  send:",
        "    limits: [{type: fixed-window, limit: 3, window: 1m}]",
        "routes:",
        "  - {name: ws, websocket: true, paths: [/ws], rules: [connect]}",
        "websocket:",
        "  maxConnectionsPerIp: 2",
        "  actionField: type",
        "  actionRules:",
        "    SEND: send");
    URI ws = URI.create("ws://127.0.0.1:" + server.port() + "/ws");
    WsClient a = client(ws);
    WsClient b = client(ws);
    assertThat(b.send("hello")).isTrue();
    assertThat(b.next()).isEqualTo("hello");
    assertThat(client(ws).closeCode()).as("a third connection from the address").isEqualTo(1013);

    List<String> sent = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      sent.add("m" + i);
      sent.add("{\"type\":\"SEND\",\"n\":" + i + "}");
    }
    for (String m : sent) {
      assertThat(a.send(m)).isTrue();
    }
    List<String> received = new ArrayList<>();
    for (int i = 0; i < sent.size(); i++) {
      received.add(a.next());
    }
    // Passed messages reach the upstream, and come back, in the order sent; the gateway
    // answers the refused SENDs itself, so their errors may overtake the echoes.
    List<String> echoed = received.stream().filter(m -> !m.startsWith("{\"error\"")).toList();
    List<String> errors = received.stream().filter(m -> m.startsWith("{\"error\"")).toList();
    List<String> passed = new ArrayList<>(sent.subList(0, 7));
    passed.add("m4");
    assertThat(echoed).containsExactlyElementsOf(passed);
    assertThat(errors).hasSize(2)
        .allMatch(m -> m.startsWith("{\"error\":\"rate_limited\",\"action\":\"SEND\""));

    a.ws.sendClose(1000, "bye").get(10, TimeUnit.SECONDS);
    assertThat(a.closeCode()).isEqualTo(1000);
    // The lease is released asynchronously: poll (bounded) until a new connection is served.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    String back = null;
    while (back == null) {
      assertThat(System.nanoTime()).as("the lease came back within 10 s").isLessThan(until);
      WsClient again = client(ws);
      again.send("back");
      while (back == null && !again.closed.isDone()) {
        back = again.messages.poll(10, TimeUnit.MILLISECONDS);
      }
    }
    assertThat(back).isEqualTo("back");
  }

  private WsClient client(URI ws) throws Exception {
    WsClient c = WsClient.connect(ws);
    open.add(() -> c.ws.abort());
    return c;
  }
}
