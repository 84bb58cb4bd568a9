package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisStore;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AdminServerTest {

  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  final Metrics metrics = new Metrics((level, message, fields) -> {});
  final StoreHealth store = StoreHealth.remote("redis://***@10.0.0.7:6379");
  AdminServer admin;

  @BeforeEach
  void start() throws Exception {
    LoadedPolicy policy = PolicyLoader.loadDefault(Map.of());
    metrics.registerRules(policy.config().policy().rules().keySet());
    admin = AdminServer.builder(metrics, () -> policy,
        () -> Instant.parse("2025-01-01T00:00:00Z"), "test", store)
        .start(new InetSocketAddress("127.0.0.1", 0));
    store.listening();   // the process's other listeners are bound (SluiceServer says so)
  }

  @AfterEach
  void stop() {
    admin.close();
  }

  HttpResponse<String> get(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + path))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void healthz() throws Exception {
    HttpResponse<String> r = get("/healthz");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("{\"status\":\"ok\"}\n");
  }

  @Test
  void livez_isHealthzUnderTheNameProbesUse() throws Exception {
    assertThat(get("/livez").body()).isEqualTo(get("/healthz").body());
    assertThat(get("/livez").statusCode()).isEqualTo(200);
  }

  /** Issue 7: /healthz said OK before the store had connected; /readyz waits for it. */
  @Test
  void issue7_readyz_is503WithItsReason_untilTheStoreIsReady_thenStays200() throws Exception {
    store.on(RedisStore.Event.CONNECT_FAILED, "Connection refused: /10.0.0.7:6379");
    HttpResponse<String> starting = get("/readyz");
    assertThat(starting.statusCode()).isEqualTo(503);
    assertThat(starting.body()).isEqualTo("{\"status\":\"not ready\",\"store\":"
        + "\"redis://***@10.0.0.7:6379\",\"connected\":false,\"circuit\":\"closed\","
        + "\"reason\":\"cannot reach it: Connection refused: /10.0.0.7:6379\"}\n");
    assertThat(get("/healthz").statusCode()).as("liveness is not readiness").isEqualTo(200);

    store.on(RedisStore.Event.READY, "redis://***@10.0.0.7:6379");
    assertThat(get("/readyz").statusCode()).isEqualTo(200);
    // an outage after start: still ready (each rule's onStoreError decides), and it says so
    store.on(RedisStore.Event.CONNECTION_LOST, "10.0.0.7:6379");
    store.on(RedisStore.Event.CIRCUIT_OPENED, "failure rate 100 %");
    HttpResponse<String> lost = get("/readyz");
    assertThat(lost.statusCode()).isEqualTo(200);
    assertThat(lost.body()).contains("\"status\":\"ready\"").contains("\"connected\":false")
        .contains("\"circuit\":\"open\"").contains("\"reason\":\"connection lost to "
            + "10.0.0.7:6379\"");
  }

  @Test
  void readyz_memoryStore_isReadyAtOnce() throws Exception {
    admin.close();
    StoreHealth memory = StoreHealth.memory();
    admin = AdminServer.builder(metrics, () -> null, Instant::now, "test", memory)
        .start(new InetSocketAddress("127.0.0.1", 0));
    assertThat(get("/readyz").statusCode()).as("listeners not yet bound").isEqualTo(503);
    memory.listening();
    HttpResponse<String> r = get("/readyz");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("{\"status\":\"ready\",\"store\":\"memory\"}\n");
  }

  @Test
  void metrics_inPrometheusTextFormat() throws Exception {
    metrics.reload(true);
    HttpResponse<String> r = get("/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue(
        "text/plain; version=0.0.4; charset=utf-8");
    assertThat(dev.sluice.server.Prom.canon(r.body()))
        .contains("sluice_decisions_total{rule=\"analysis\",outcome=\"refused\"} 0\n")
        .contains("sluice_reloads_total{result=\"ok\"} 1\n")
        .contains("sluice_websocket_connections 0\n");
  }

  @Test
  void policy_asJson() throws Exception {
    HttpResponse<String> r = get("/v1/policy");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    assertThat(r.body()).startsWith("{\"source\":\"<embedded default>\","
        + "\"loadedAt\":\"2025-01-01T00:00:00Z\",\"version\":\"test\",\"policy\":{\"version\":1,");
    assertThat(r.body()).contains("\"name\":\"analysis\",\"burst\":15,\"refill\":30");
  }

  @Test
  void otherPathsAndMethods() throws Exception {
    assertThat(get("/nope").statusCode()).isEqualTo(404);
    HttpResponse<String> post = client.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + admin.port() + "/metrics"))
        .POST(HttpRequest.BodyPublishers.ofString("x")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.headers().firstValue("allow")).hasValue("GET, HEAD");
  }
}
