package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitRequest;
import dev.sluice.rls.envoy.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/check} on its own listener ({@code --check-api}), asked by the JDK's HTTP
 * client: both request shapes, the counters it shares with the gRPC service, and hostile bodies.
 */
class CheckApiIntegrationTests {

  static final String POLICY = String.join("\n",
      "rules:",
      "  analysis:",
      "    limits: [{type: token-bucket, burst: 2, refill: 1, period: 1h}]",
      "domains:",
      "  - domain: api",
      "    descriptors:",
      "      - {key: ip, rate_limit: {unit: day, requests_per_unit: 3}}",
      "");

  @TempDir
  Path dir;

  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  SluiceServer server;
  ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, POLICY);
    server = SluiceServer.start(Main.parseServe(List.of("--config", file.toString(), "--listen",
        "127.0.0.1:0", "--admin", "off", "--rls", "127.0.0.1:0", "--check-api", "127.0.0.1:0"),
        Map.of()), Map.of(),
        new Log(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.rlsPort()).usePlaintext()
        .build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.close();
  }

  HttpResponse<String> post(String body) throws Exception {
    return send(HttpRequest.newBuilder(uri()).POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
    return http.send(b.timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.checkPort() + "/v1/check");
  }

  static final String IP = "{\"domain\":\"api\",\"descriptors\":[{\"entries\":"
      + "[{\"key\":\"ip\",\"value\":\"203.0.113.7\"}]}],\"hits\":1}";

  @Test
  void domainShape_sharesCountersWithTheGrpcService() throws Exception {
    HttpResponse<String> first = post(IP);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.headers().firstValue("content-type")).hasValue(
        "application/json; charset=utf-8");
    assertThat(first.body()).isEqualTo("{\"allowed\":true,\"overall_code\":\"OK\",\"descriptors\":"
        + "[{\"code\":\"OK\",\"limit\":{\"name\":\"per-day\",\"requests_per_unit\":3,\"unit\":"
        + "\"DAY\",\"window_seconds\":86400},\"remaining\":2,\"reset_seconds\":"
        + first.body().replaceAll(".*\"reset_seconds\":(\\d+).*", "$1") + "}]}");
    // The same counter through gRPC.
    int left = RateLimitServiceGrpc.newBlockingStub(channel).shouldRateLimit(
        RateLimitRequest.newBuilder().setDomain("api").addDescriptors(RateLimitDescriptor
            .newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("ip")
                .setValue("203.0.113.7"))).build()).getStatuses(0).getLimitRemaining();
    assertThat(left).isEqualTo(1);
    assertThat(post(IP).body()).contains("\"remaining\":0").startsWith("{\"allowed\":true");
    assertThat(post(IP).body()).startsWith("{\"allowed\":false,\"overall_code\":\"OVER_LIMIT\"");
    // hits 0 per descriptor reports without consuming, and the unknown key is OK, no limit.
    assertThat(post("{\"domain\":\"api\",\"descriptors\":[{\"entries\":[{\"key\":\"ip\","
        + "\"value\":\"198.51.100.1\"}],\"hits_addend\":0},{\"entries\":[{\"key\":\"x\","
        + "\"value\":\"y\"}]}]}").body()).contains("\"remaining\":3")
        .contains("{\"code\":\"OK\",\"limit\":null}");
  }

  @Test
  void ruleShape_checksAPolicyRuleForAnIdentity() throws Exception {
    String body = "{\"rule\":\"analysis\",\"key\":{\"ip\":\"203.0.113.9\"}}";
    assertThat(post(body).body()).startsWith("{\"allowed\":true,\"rule\":\"analysis\"")
        .contains("\"limit\":2,\"remaining\":1");
    assertThat(post(body).body()).contains("\"remaining\":0");
    HttpResponse<String> refused = post(body);
    assertThat(refused.statusCode()).isEqualTo(200);
    assertThat(refused.body()).startsWith("{\"allowed\":false").contains("retry_after_seconds");
    // Another address has its own bucket.
    assertThat(post("{\"rule\":\"analysis\",\"key\":{\"ip\":\"203.0.113.10\"}}").body())
        .startsWith("{\"allowed\":true");
  }

  @Test
  void hostileInput_is400WithAClearMessage_andCountsNothing() throws Exception {
    assertBad("{\"domain\":", "body : invalid JSON at offset 10 (expected: a value)");
    assertBad("[1,2]", "body : not an object");
    assertBad("{\"rule\":\"nope\"}", "rule : \\\"nope\\\" (expected: one of [analysis])");
    assertBad("{\"domain\":\"api\",\"descriptors\":[]}", "descriptors : [] (expected: at least "
        + "one descriptor)");
    assertBad("{\"descriptors\":[{\"entries\":[{\"key\":\"ip\",\"value\":\"a\"}]}]}",
        "domain : missing");
    assertBad("[".repeat(5000) + "]".repeat(5000), "at most 16 levels of nesting");
    StringBuilder many = new StringBuilder("{\"domain\":\"api\",\"descriptors\":[{\"entries\":[");
    for (int i = 0; i < 2000; i++) {
      many.append(i > 0 ? "," : "").append("{\"key\":\"k\",\"value\":\"v\"}");
    }
    assertBad(many.append("]}]}").toString(), "descriptors[0].entries : 65 entries (expected: "
        + "at most 16)");
    assertBad("{\"domain\":\"api\",\"descriptors\":[{\"entries\":[{\"key\":\"ip\",\"value\":\""
        + "x".repeat(2000) + "\"}]}]}", "descriptors[0].entries[0].value : 2000 bytes");
    HttpResponse<String> big = post("{\"domain\":\"" + "x".repeat(1024 * 1024) + "\"}");
    assertThat(big.statusCode()).isEqualTo(413);
    HttpResponse<String> get = send(HttpRequest.newBuilder(uri()).GET());
    assertThat(get.statusCode()).isEqualTo(405);
    HttpResponse<String> latin1 = send(HttpRequest.newBuilder(uri()).POST(
        HttpRequest.BodyPublishers.ofByteArray(new byte[] {'{', '"', (byte) 0xe9, '"', '}'})));
    assertThat(latin1.statusCode()).isEqualTo(400);
    assertThat(latin1.body()).contains("not UTF-8");
    // None of the above was counted.
    assertThat(post(IP).body()).contains("\"remaining\":2");
  }

  void assertBad(String body, String detail) throws Exception {
    HttpResponse<String> r = post(body);
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).startsWith("{\"error\":\"bad request\",\"detail\":").contains(detail);
  }
}
