package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitRequest;
import dev.sluice.rls.envoy.RateLimitResponse;
import dev.sluice.rls.envoy.RateLimitResponse.Code;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice serve --rls} end to end: the command line parsed as {@code Main} does, the rate
 * limit service alone ({@code --listen off}) or beside the gateway, reloads, and two instances
 * on one real redis-server sharing one limit.
 */
class RlsServeIntegrationTests {

  @TempDir
  Path dir;

  final Closer closing = new Closer();

  @AfterEach
  void stop() throws Exception {
    closing.close();
  }

  static String policy(int perDay) {
    return String.join("\n",
        "domains:",
        "  - domain: api",
        "    descriptors:",
        "      - {key: user, rate_limit: {unit: day, requests_per_unit: " + perDay + "}}",
        "");
  }

  SluiceServer serve(String... args) throws Exception {
    SluiceServer s = SluiceServer.start(Main.parseServe(List.of(args), Map.of()), Map.of(),
        new Log(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    closing.add(s);
    return s;
  }

  RateLimitServiceGrpc.RateLimitServiceBlockingStub client(int port) {
    ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    closing.add(() -> ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return RateLimitServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  static RateLimitRequest user(String id) {
    return RateLimitRequest.newBuilder().setDomain("api").addDescriptors(
        RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder()
            .setKey("user").setValue(id))).build();
  }

  @Test
  void rlsAlone_reloadsWithThePolicy_andIsMetered() throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, policy(5));
    SluiceServer s = serve("--config", file.toString(), "--listen", "off", "--admin",
        "127.0.0.1:0", "--rls", "127.0.0.1:0");
    assertThat(s.port()).isEqualTo(-1);
    var rls = client(s.rlsPort());
    RateLimitResponse r = rls.shouldRateLimit(user("u1"));
    assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
    Files.writeString(file, policy(7));
    assertThat(s.reload()).isTrue();
    r = rls.shouldRateLimit(user("u1"));
    assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(7);
    String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + s.adminPort() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics).contains("sluice_rls_decisions_total{descriptor=\"api.user\","
        + "domain=\"api\",outcome=\"ok\"} 2");
  }

  @Test
  void rlsFromThePolicyFile_besideTheGateway() throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, policy(5) + "rls:\n  listen: 127.0.0.1:0\n");
    SluiceServer s = serve("--config", file.toString(), "--listen", "127.0.0.1:0", "--admin",
        "off");
    assertThat(s.port()).isPositive();
    assertThat(client(s.rlsPort()).shouldRateLimit(user("u1")).getOverallCode())
        .isEqualTo(Code.OK);
  }

  @Test
  void twoInstancesOnOneRedis_shareOneLimitExactly() throws Exception {
    RedisProcess redis = RedisProcess.start();
    closing.add(redis);
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, policy(10));
    String store = "redis://127.0.0.1:" + redis.port;
    SluiceServer a = serve("--config", file.toString(), "--listen", "off", "--admin", "off",
        "--rls", "127.0.0.1:0", "--store", store);
    SluiceServer b = serve("--config", file.toString(), "--listen", "off", "--admin", "off",
        "--rls", "127.0.0.1:0", "--store", store);
    var ca = client(a.rlsPort());
    var cb = client(b.rlsPort());
    List<Integer> remaining = new ArrayList<>();
    List<Code> codes = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      RateLimitResponse r = (i % 2 == 0 ? ca : cb).shouldRateLimit(user("shared"));
      codes.add(r.getOverallCode());
      remaining.add(r.getStatuses(0).getLimitRemaining());
    }
    assertThat(codes.subList(0, 10)).containsOnly(Code.OK);
    assertThat(codes.subList(10, 12)).containsOnly(Code.OVER_LIMIT);
    assertThat(remaining.subList(0, 10)).containsExactly(9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  }
}
