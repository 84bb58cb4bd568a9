package dev.sluice.rls;

import static dev.sluice.rls.Rls.d;
import static dev.sluice.rls.Rls.hits;
import static dev.sluice.rls.Rls.req;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitRequest;
import dev.sluice.rls.envoy.RateLimitResponse;
import dev.sluice.rls.envoy.RateLimitResponse.Code;
import dev.sluice.rls.envoy.RateLimitResponse.DescriptorStatus;
import dev.sluice.rls.envoy.RateLimitResponse.RateLimit.Unit;
import dev.sluice.rls.envoy.RateLimitServiceGrpc;
import dev.sluice.rls.envoy.RateLimitUnit;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code ShouldRateLimit} over a real gRPC server on an ephemeral loopback port, asked by gRPC's
 * Java client (blocking and async stubs), on an in-memory store whose clock the test moves. The
 * first four domains are envoyproxy/ratelimit's README examples with its numbers; the rest are
 * what Sluice adds.
 */
class RlsIntegrationTests {

  static final String POLICY = String.join("\n",
      "domains:",
      "  - domain: mongo_cps",
      "    descriptors:",
      "      - {key: database, value: users, rate_limit: {unit: second, requests_per_unit: 500}}",
      "      - {key: database, value: default, rate_limit: {unit: second, requests_per_unit: 500}}",
      "  - domain: messaging",
      "    descriptors:",
      "      - key: message_type",
      "        value: marketing",
      "        descriptors:",
      "          - {key: to_number, rate_limit: {unit: day, requests_per_unit: 5}}",
      "      - {key: to_number, rate_limit: {unit: day, requests_per_unit: 100}}",
      "  - domain: edge_proxy_per_ip",
      "    descriptors:",
      "      - {key: remote_address, rate_limit: {unit: second, requests_per_unit: 10}}",
      "      - key: remote_address",
      "        value: 50.0.0.5",
      "        rate_limit: {unit: second, requests_per_unit: 0}",
      "  - domain: internal",
      "    descriptors:",
      "      - {key: ldap, rate_limit: {unlimited: true}}",
      "      - {key: azure, rate_limit: {unit: minute, requests_per_unit: 100}}",
      "  - domain: sluice",
      "    descriptors:",
      "      - key: burst",
      "        limits: [{type: token-bucket, burst: 5, refill: 1, period: 1s}]",
      "      - key: sliding",
      "        limits: [{type: sliding-window, limit: 4, window: 10s}]",
      "      - key: two",
      "        limits:",
      "          - {type: token-bucket, name: per-second, burst: 3, refill: 3, period: 1s}",
      "          - {type: fixed-window, name: per-day, limit: 5, window: 1d}",
      "      - key: shadow",
      "        rate_limit: {unit: minute, requests_per_unit: 1}",
      "        shadow_mode: true",
      "      - {key: path, value: /api/*, rate_limit: {unit: minute, requests_per_unit: 2}}",
      "      - key: general",
      "        rate_limit: {name: general, unit: minute, requests_per_unit: 1}",
      "      - key: vip",
      "        rate_limit: {unit: minute, requests_per_unit: 100, replaces: [{name: general}]}",
      "      - key: tenant",
      "        rate_limit: {unit: minute, requests_per_unit: 5}",
      "        detailed_metric: true",
      "");

  final AtomicLong clock = new AtomicLong();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  RlsServer server;
  ManagedChannel channel;
  RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

  @BeforeEach
  void start() throws Exception {
    PolicyConfig config = PolicyLoader.parse(POLICY, "p.yaml", null, Map.of()).config();
    Ticker ticker = clock::get;
    server = RlsServer.start(new InetSocketAddress("127.0.0.1", 0), () -> config,
        Store.memory(ticker, 10_000), registry);
    channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
        .build();
    rls = RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.close();
  }

  void advance(Duration d) {
    clock.addAndGet(d.toNanos());
  }

  RateLimitResponse ask(RateLimitRequest r) {
    return rls.shouldRateLimit(r);
  }

  /** The codes of {@code n} identical requests, as a string like "OK x5, OVER_LIMIT x1". */
  List<Code> codes(RateLimitRequest r, int n) {
    List<Code> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(ask(r).getOverallCode());
    }
    return out;
  }

  static List<Code> times(Code c, int n) {
    return java.util.Collections.nCopies(n, c);
  }

  // --- envoyproxy/ratelimit's README examples ---------------------------------------------------

  @Test
  void mongoCps_500PerSecondPerDatabase_asyncStub() throws Exception {
    RateLimitServiceGrpc.RateLimitServiceStub async = RateLimitServiceGrpc.newStub(channel);
    RateLimitRequest users = req("mongo_cps", d("database", "users"));
    List<CompletableFuture<RateLimitResponse>> answers = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      CompletableFuture<RateLimitResponse> f = new CompletableFuture<>();
      async.shouldRateLimit(users, observer(f));
      answers.add(f);
    }
    List<Long> remaining = new ArrayList<>();
    for (CompletableFuture<RateLimitResponse> f : answers) {
      RateLimitResponse r = f.get(10, TimeUnit.SECONDS);
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      remaining.add((long) r.getStatuses(0).getLimitRemaining());
    }
    assertThat(remaining).containsExactlyInAnyOrderElementsOf(
        java.util.stream.LongStream.range(0, 500).boxed().toList());
    RateLimitResponse over = ask(users);
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    DescriptorStatus s = over.getStatuses(0);
    assertThat(s.getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(s.getCurrentLimit().getRequestsPerUnit()).isEqualTo(500);
    assertThat(s.getCurrentLimit().getUnit()).isEqualTo(Unit.SECOND);
    assertThat(s.getLimitRemaining()).isZero();
    assertThat(s.getDurationUntilReset().getSeconds()).isEqualTo(1);
    // The other database has its own 500.
    assertThat(ask(req("mongo_cps", d("database", "default"))).getStatuses(0)
        .getLimitRemaining()).isEqualTo(499);
    advance(Duration.ofSeconds(1));
    assertThat(ask(users).getStatuses(0).getLimitRemaining()).isEqualTo(499);
  }

  static StreamObserver<RateLimitResponse> observer(CompletableFuture<RateLimitResponse> f) {
    return new StreamObserver<>() {
      public void onNext(RateLimitResponse value) {
        f.complete(value);
      }

      public void onError(Throwable t) {
        f.completeExceptionally(t);
      }

      public void onCompleted() {}
    };
  }

  @Test
  void messaging_fiveMarketingADay_andARefusalConsumesNothing() {
    RateLimitDescriptor.Builder marketing = d("message_type", "marketing", "to_number", "2061111");
    RateLimitDescriptor.Builder number = d("to_number", "2061111");
    RateLimitRequest both = req("messaging", marketing, number);
    assertThat(codes(both, 5)).isEqualTo(times(Code.OK, 5));
    RateLimitResponse sixth = ask(both);
    assertThat(sixth.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(sixth.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(sixth.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.DAY);
    assertThat(sixth.getStatuses(1).getCode()).isEqualTo(Code.OK);
    // 100 a day to the number: 5 taken, the refused sixth took none, this one takes the sixth.
    RateLimitResponse alone = ask(req("messaging", number));
    assertThat(alone.getStatuses(0).getLimitRemaining()).isEqualTo(94);
    assertThat(alone.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(100);
    // Marketing to another number is counted apart (key without value: per value).
    assertThat(ask(req("messaging", d("message_type", "marketing", "to_number", "2062222")))
        .getOverallCode()).isEqualTo(Code.OK);
  }

  @Test
  void edgeProxyPerIp_zeroRateBlocks_othersTenPerSecond() {
    RateLimitResponse blocked = ask(req("edge_proxy_per_ip", d("remote_address", "50.0.0.5")));
    assertThat(blocked.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    RateLimitRequest other = req("edge_proxy_per_ip", d("remote_address", "10.0.0.1"));
    assertThat(codes(other, 11)).isEqualTo(concat(times(Code.OK, 10), times(Code.OVER_LIMIT, 1)));
  }

  @Test
  void internal_unlimitedHasNoLimit_azure100PerMinute() {
    RateLimitResponse ldap = ask(req("internal", d("ldap", "x")));
    assertThat(ldap.getOverallCode()).isEqualTo(Code.OK);
    assertThat(ldap.getStatuses(0).hasCurrentLimit()).isFalse();
    assertThat(codes(req("internal", d("ldap", "x")), 1000)).doesNotContain(Code.OVER_LIMIT);
    RateLimitResponse azure = ask(req("internal", d("azure", "x")));
    assertThat(azure.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(100);
    assertThat(azure.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.MINUTE);
    assertThat(azure.getStatuses(0).getLimitRemaining()).isEqualTo(99);
  }

  @Test
  void unknownDescriptorOrDomain_isOkWithoutLimit() {
    RateLimitResponse r = ask(req("mongo_cps", d("database", "nope"), d("x", "y")));
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertThat(r.getStatusesList()).hasSize(2).allSatisfy(s -> {
      assertThat(s.getCode()).isEqualTo(Code.OK);
      assertThat(s.hasCurrentLimit()).isFalse();
      assertThat(s.getLimitRemaining()).isZero();
    });
    assertThat(ask(req("no-such-domain", d("a", "b"))).getOverallCode()).isEqualTo(Code.OK);
  }

  // --- what Sluice adds ---------------------------------------------------------------------------

  @Test
  void tokenBucket_burstOfFive_thenOnePerSecond() {
    RateLimitRequest r = req("sluice", d("burst", "u1"));
    assertThat(codes(r, 6)).isEqualTo(concat(times(Code.OK, 5), times(Code.OVER_LIMIT, 1)));
    advance(Duration.ofSeconds(1));
    assertThat(codes(r, 2)).containsExactly(Code.OK, Code.OVER_LIMIT);
  }

  @Test
  void slidingWindow_halfIntoTheNextWindow_admitsHalf() {
    RateLimitRequest r = req("sluice", d("sliding", "u1"));
    assertThat(codes(r, 5)).isEqualTo(concat(times(Code.OK, 4), times(Code.OVER_LIMIT, 1)));
    // 15 s: half of the previous window's 4 still count, so 2 fit, where a fixed window gives 4.
    advance(Duration.ofSeconds(15));
    assertThat(codes(r, 3)).containsExactly(Code.OK, Code.OK, Code.OVER_LIMIT);
  }

  @Test
  void twoLimitsOnOneDescriptor_perSecondThenPerDay() {
    RateLimitRequest r = req("sluice", d("two", "u1"));
    assertThat(codes(r, 3)).isEqualTo(times(Code.OK, 3));
    RateLimitResponse fourth = ask(r);
    assertThat(fourth.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(fourth.getStatuses(0).getCurrentLimit().getName()).isEqualTo("per-second");
    advance(Duration.ofSeconds(1));
    assertThat(codes(r, 2)).isEqualTo(times(Code.OK, 2));
    RateLimitResponse daily = ask(r);
    assertThat(daily.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(daily.getStatuses(0).getCurrentLimit().getName()).isEqualTo("per-day");
    assertThat(daily.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.DAY);
    assertThat(daily.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
  }

  @Test
  void hitsAddend_threeConsumesThree_zeroReportsWithoutConsuming() {
    RateLimitRequest three = req("sluice", d("burst", "u1")).toBuilder().setHitsAddend(3).build();
    RateLimitResponse first = ask(three);
    assertThat(first.getOverallCode()).isEqualTo(Code.OK);
    assertThat(first.getStatuses(0).getLimitRemaining()).isEqualTo(2);
    assertThat(ask(three).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    RateLimitRequest peek = req("sluice", hits(d("burst", "u1"), 0));
    for (int i = 0; i < 3; i++) {
      RateLimitResponse r = ask(peek);
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(2);
    }
    // Per-descriptor hits win over the request's.
    RateLimitResponse two = ask(req("sluice", hits(d("burst", "u1"), 2)).toBuilder()
        .setHitsAddend(5).build());
    assertThat(two.getStatuses(0).getLimitRemaining()).isZero();
    assertThat(two.getOverallCode()).isEqualTo(Code.OK);
  }

  @Test
  void shadowMode_neverRefuses_butIsCounted() {
    RateLimitRequest r = req("sluice", d("shadow", "u1"));
    assertThat(codes(r, 3)).isEqualTo(times(Code.OK, 3));
    assertThat(registry.counter("sluice_rls_decisions", "domain", "sluice", "descriptor",
        "sluice.shadow", "outcome", "shadow_over_limit").count()).isEqualTo(2);
  }

  @Test
  void metrics_perDomainAndDescriptor_detailedOnlyWhereAsked() {
    ask(req("sluice", d("tenant", "acme")));
    ask(req("sluice", d("burst", "u1"), d("burst", "u2")));
    ask(req("nowhere", d("a", "b")));
    assertThat(registry.counter("sluice_rls_decisions", "domain", "sluice", "descriptor",
        "sluice.tenant|tenant=acme", "outcome", "ok").count()).isEqualTo(1);
    assertThat(registry.counter("sluice_rls_decisions", "domain", "sluice", "descriptor",
        "sluice.burst", "outcome", "ok").count()).isEqualTo(2);
    assertThat(registry.counter("sluice_rls_decisions", "domain", "_unknown", "descriptor",
        "_none", "outcome", "no_limit").count()).isEqualTo(1);
    assertThat(registry.timer("sluice_rls_requests").count()).isEqualTo(3);
  }

  @Test
  void replaces_dropsTheNamedLimitWhenBothMatch() {
    RateLimitRequest both = req("sluice", d("general", "u1"), d("vip", "u1"));
    for (int i = 0; i < 3; i++) {
      RateLimitResponse r = ask(both);
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
      assertThat(r.getStatuses(1).getCurrentLimit().getRequestsPerUnit()).isEqualTo(100);
    }
    RateLimitRequest general = req("sluice", d("general", "u1"));
    assertThat(codes(general, 2)).containsExactly(Code.OK, Code.OVER_LIMIT);
  }

  @Test
  void wildcardValue_countsEachPathApart() {
    assertThat(codes(req("sluice", d("path", "/api/a")), 3))
        .containsExactly(Code.OK, Code.OK, Code.OVER_LIMIT);
    assertThat(ask(req("sluice", d("path", "/api/b"))).getOverallCode()).isEqualTo(Code.OK);
    assertThat(ask(req("sluice", d("path", "/other"))).getStatuses(0).hasCurrentLimit())
        .isFalse();
  }

  @Test
  void requestLimitOverride_isHonoured() {
    RateLimitDescriptor.Builder d = d("anything", "x").setLimit(
        RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(3)
            .setUnit(RateLimitUnit.MINUTE));
    RateLimitRequest r = req("nowhere", d);
    assertThat(codes(r, 4)).isEqualTo(concat(times(Code.OK, 3), times(Code.OVER_LIMIT, 1)));
    assertThat(ask(r).getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.MINUTE);
  }

  @Test
  void responseHeaders_carryIetfRateLimitFields() {
    RateLimitResponse r = ask(req("mongo_cps", d("database", "users")));
    assertThat(r.getResponseHeadersToAddList()).extracting(h -> h.getKey() + ": " + h.getValue())
        .containsExactly("RateLimit-Policy: \"per-second\";q=500;w=1",
            "RateLimit: \"per-second\";r=499;t=1");
  }

  @Test
  void health_isServing() {
    var health = HealthGrpc.newBlockingStub(channel);
    assertThat(health.check(HealthCheckRequest.newBuilder().setService(
        RateLimitServiceGrpc.SERVICE_NAME).build()).getStatus())
        .isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void reflection_listsTheRateLimitService() throws Exception {
    CompletableFuture<List<String>> names = new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> requests =
        io.grpc.reflection.v1.ServerReflectionGrpc.newStub(channel).serverReflectionInfo(
            new StreamObserver<>() {
              public void onNext(io.grpc.reflection.v1.ServerReflectionResponse r) {
                names.complete(r.getListServicesResponse().getServiceList().stream()
                    .map(io.grpc.reflection.v1.ServiceResponse::getName).toList());
              }

              public void onError(Throwable t) {
                names.completeExceptionally(t);
              }

              public void onCompleted() {}
            });
    requests.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder()
        .setListServices("").build());
    requests.onCompleted();
    assertThat(names.get(10, TimeUnit.SECONDS)).contains(RateLimitServiceGrpc.SERVICE_NAME,
        "grpc.health.v1.Health");
  }

  // --- bad input -----------------------------------------------------------------------------------

  @Test
  void badInput_isInvalidArgument_andCountsNothing() {
    RateLimitDescriptor.Builder big = d("database", "users");
    for (int i = 0; i < 10_000; i++) {
      big.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("k" + i).setValue("v"));
    }
    String mb = "x".repeat(1024 * 1024);
    assertInvalid(req("", d("database", "users")), "domain : missing");
    assertInvalid(req("mongo_cps"), "descriptors : [] (expected: at least one descriptor)");
    assertInvalid(req("mongo_cps", d()), "descriptors[0].entries : []");
    assertInvalid(req("mongo_cps", big), "descriptors[0].entries : 10001 entries");
    assertInvalid(req("mongo_cps", d("database", "users"), d("database", mb)),
        "descriptors[1].entries[0].value : 1048576 bytes (expected: at most 1024)");
    assertInvalid(req("mongo_cps", d("database", "users").setLimit(
        RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(1))),
        "descriptors[0].limit.unit : UNKNOWN");
    // Nothing above was counted: the first real request still has 499 left.
    assertThat(ask(req("mongo_cps", d("database", "users"))).getStatuses(0).getLimitRemaining())
        .isEqualTo(499);
    assertThat(registry.counter("sluice_rls_invalid").count()).isEqualTo(6);
  }

  void assertInvalid(RateLimitRequest r, String message) {
    assertThatThrownBy(() -> ask(r)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.getStatus().getDescription()).contains(message);
    });
  }

  static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
