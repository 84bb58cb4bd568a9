package dev.sluice.rls;

import dev.sluice.core.Store;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.rls.envoy.RateLimitServiceGrpc;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The Envoy rate limit service ({@code sluice serve --rls HOST:PORT}): gRPC's
 * {@code ShouldRateLimit} over the server's store and policy, with the standard health and
 * reflection services. Handlers run on gRPC's transport threads (a direct executor): nothing in
 * them waits, and an in-memory decision completes inline, so a hop to another pool would cost
 * more than it saves.
 *
 * <p>Inbound messages are capped at {@value #MAX_MESSAGE_BYTES} bytes: large enough that an
 * oversized value inside it is answered {@code INVALID_ARGUMENT} naming the field, small enough
 * that no request can make the server buffer much.
 */
public final class RlsServer implements AutoCloseable {

  static final int MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

  private final Server server;
  private final HealthStatusManager health;

  private RlsServer(Server server, HealthStatusManager health) {
    this.server = server;
    this.health = health;
  }

  /** Starts the service on {@code address} (port 0: any free port). */
  public static RlsServer start(InetSocketAddress address, Supplier<PolicyConfig> config,
      Store store, MeterRegistry meterRegistry) throws IOException {
    HealthStatusManager health = new HealthStatusManager();
    RlsMetrics metrics = meterRegistry != null
        ? new MicrometerRlsMetrics(meterRegistry, config) : RlsMetrics.NONE;
    Server server = NettyServerBuilder.forAddress(address)
        .directExecutor()
        .maxInboundMessageSize(MAX_MESSAGE_BYTES)
        .maxInboundMetadataSize(64 * 1024)
        .addService(new RlsService(config, new Decider(store), metrics))
        .addService(health.getHealthService())
        .addService(ProtoReflectionServiceV1.newInstance())
        .build()
        .start();
    health.setStatus("", ServingStatus.SERVING);
    health.setStatus(RateLimitServiceGrpc.SERVICE_NAME, ServingStatus.SERVING);
    return new RlsServer(server, health);
  }

  public int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    health.enterTerminalState();
    server.shutdown();
    try {
      if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
