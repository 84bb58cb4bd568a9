package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Identity;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Verdicts;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A store on the application's own Lettuce client ({@code Builder.client}): it decides on a
 * connection of that client, keeps its deadline on its own timer (the client's timeouts are the
 * application's), and closing the store leaves the client usable.
 */
class AppClientIntegrationTests {

  private static final long SLACK_MS = 400;

  /** Fixed windows go through one script call each (token buckets are batched). */
  private static final Rule THREE = Rule.builder("three")
      .limit(Limit.fixedWindow("w", 3, Duration.ofHours(1))).onStoreError(OnStoreError.DENY)
      .build();

  @Test
  void decidesOnTheAppsClient_andClosingTheStoreLeavesTheClientOpen() throws Exception {
    RedisProcess redis = Servers.standalone();
    RedisClient app = RedisClient.create();
    try {
      // Lettuce publishes events asynchronously: the first activation, when it arrives.
      CompletableFuture<ConnectionActivatedEvent> activated = new CompletableFuture<>();
      app.getResources().eventBus().get().subscribe(e -> {
        if (e instanceof ConnectionActivatedEvent a) {
          activated.complete(a);
        }
      });
      try (Store store = RedisStore.builder().uri(redis.uri()).client(app)
          .keyPrefix(Stores.uniquePrefix("app-client")).awaitConnected(Duration.ofSeconds(15))
          .build()) {
        RateLimiter limiter = RateLimiter.of(store);
        for (int i = 0; i < 3; i++) {
          assertThat(limiter.check(THREE, Identity.ip("192.0.2.1")).allowed()).isTrue();
        }
        var refused = limiter.check(THREE, Identity.ip("192.0.2.1"));
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.degraded()).isFalse();
        assertThat(((InetSocketAddress) activated.get(10, TimeUnit.SECONDS).remoteAddress())
            .getPort()).as("the app's client connected to this Redis").isEqualTo(redis.port);
      }
      try (StatefulRedisConnection<String, String> c = app.connect(RedisURI.create(
          redis.uri()))) {
        assertThat(c.sync().ping()).as("the app's client after the store closed")
            .isEqualTo("PONG");
      }
    } finally {
      app.shutdown();
    }
  }

  @Test
  void stoppedRedis_aCallFailsAtTheStoresDeadline_notTheClientsTimeout() throws Exception {
    long deadlineMs = 300;
    RedisClient app = RedisClient.create();   // Lettuce's own timeout: 60 s
    try (RedisProcess redis = RedisProcess.start();
        Store store = RedisStore.builder().uri(redis.uri()).client(app)
            .keyPrefix(Stores.uniquePrefix("app-deadline")).deadline(Duration.ofMillis(deadlineMs))
            .awaitConnected(Duration.ofSeconds(15)).build()) {
      redis.suspend();
      try {
        long start = System.nanoTime();
        CompletableFuture<Verdicts> stage = store.evaluateAsync(List.of(THREE),
            Identity.ip("192.0.2.2"), 1, new Verdicts()).toCompletableFuture();
        Throwable failure = null;
        try {
          stage.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          failure = e.getCause();
        }
        long failedAt = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(failure).isInstanceOf(StoreException.class)
            .hasMessageContaining("within " + deadlineMs + " ms");
        assertThat(failedAt).isBetween(deadlineMs - 5, deadlineMs + SLACK_MS);
      } finally {
        redis.resume();
      }
    } finally {
      app.shutdown();
    }
  }

  @Test
  void aClusterUri_withAnAppClient_isRefused() {
    RedisClient app = RedisClient.create();
    try {
      assertThatThrownBy(() -> RedisStore.builder().uri("redis-cluster://127.0.0.1:7000")
          .client(app).build()).isInstanceOf(InvalidValueException.class)
          .hasMessageStartingWith("uri : redis-cluster://127.0.0.1:7000 (expected: ");
    } finally {
      app.shutdown();
    }
  }
}
