package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Identity;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Verdicts;
import io.lettuce.core.RedisClient;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The store on the caller's event loops ({@link RedisStore.Builder#eventLoops}): one connection
 * per loop, a call made on a loop completed on it, everything else on the shared connection; on
 * NIO loops and on epoll loops. With epoll on the test class path Lettuce's own transport is
 * epoll, so the NIO runs also prove that each loop gets the channel class of its own transport.
 */
class EventLoopsIntegrationTests {

  private static final Rule BUCKET = Rule.builder("loops-bucket")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1))).build();
  /** Two limits: evaluate.lua, not the batched bucket path. */
  private static final Rule TWO = Rule.builder("loops-two")
      .limit(Limit.tokenBucket("b", 1_000_000, 1_000_000, Duration.ofSeconds(1)))
      .limit(Limit.fixedWindow("w", 1_000_000, Duration.ofMinutes(1))).build();

  private static EventLoopGroup loops(String transport, int n) {
    if (transport.equals("epoll")) {
      Assumptions.assumeTrue(Epoll.isAvailable(), "epoll is not available here");
      return new MultiThreadIoEventLoopGroup(n, EpollIoHandler.newFactory());
    }
    return new MultiThreadIoEventLoopGroup(n, NioIoHandler.newFactory());
  }

  private static Store store(RedisProcess redis, EventLoopGroup group, String name,
      RedisStore.Listener listener) {
    return RedisStore.builder().uri(redis.uri()).keyPrefix(Stores.uniquePrefix(name))
        .deadline(Duration.ofSeconds(2)).eventLoops(group).listener(listener)
        .awaitConnected(Duration.ofSeconds(15)).build();
  }

  /** Connections on the server, without the one asking. */
  private static int clients(RedisProcess redis) {
    return (int) redis.cmd("CLIENT", "LIST").lines().filter(l -> l.startsWith("id=")).count() - 1;
  }

  private static List<EventLoop> each(EventLoopGroup group) {
    List<EventLoop> all = new ArrayList<>();
    for (EventExecutor e : group) {
      all.add((EventLoop) e);
    }
    return all;
  }

  @ParameterizedTest
  @ValueSource(strings = {"nio", "epoll"})
  void decisionsMadeOnALoop_completeOnThatLoop_andEachLoopHasItsConnection(String transport)
      throws Exception {
    EventLoopGroup group = loops(transport, 3);
    try (RedisProcess redis = RedisProcess.start()) {
      try (Store store = store(redis, group, "on-loop", null)) {
        assertThat(clients(redis)).as("one connection per loop and a shared one").isEqualTo(4);
        assertThat(Stores.lettuce(store).lanes().size()).isEqualTo(4);
        for (EventLoop loop : each(group)) {
          // 50 decisions made in one task of the loop, both paths; each records where it ended.
          List<CompletableFuture<Boolean>> onLoop = loop.submit(() -> {
            List<CompletableFuture<Boolean>> fs = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
              Rule r = i % 5 == 0 ? TWO : BUCKET;
              fs.add(store.evaluateAsync(List.of(r), Identity.ip("10.1.0." + i), 1,
                  new Verdicts()).toCompletableFuture().thenApply(v -> {
                    assertThat(v.get(0).allowed()).isTrue();
                    return loop.inEventLoop();
                  }));
            }
            return fs;
          }).get(5, TimeUnit.SECONDS);
          for (CompletableFuture<Boolean> f : onLoop) {
            assertThat(f.get(5, TimeUnit.SECONDS)).as("completed on the calling loop "
                + loop).isTrue();
          }
        }
        // Off the loops: the shared connection, never completed on a loop (on the store's own
        // I/O thread, or on this one when the answer came before the continuation was added).
        boolean onALoop = store.evaluateAsync(List.of(BUCKET), Identity.ip("10.2.0.1"), 1,
            new Verdicts()).toCompletableFuture()
            .thenApply(v -> each(group).stream().anyMatch(EventLoop::inEventLoop))
            .get(5, TimeUnit.SECONDS);
        assertThat(onALoop).as("a call from another thread completed on a loop").isFalse();
      }
      assertThat(clients(redis)).as("all closed by close()").isZero();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  /**
   * A blocking call made on a loop cannot wait for that loop's own connection (only the loop
   * would read the answer): it goes out on the shared one and returns at once.
   */
  @Test
  void blockingCallOnALoop_usesTheSharedConnection_andAnswers() throws Exception {
    EventLoopGroup group = loops("nio", 1);
    try (RedisProcess redis = RedisProcess.start();
        Store store = store(redis, group, "blocking", null)) {
      EventLoop loop = each(group).get(0);
      long start = System.nanoTime();
      Verdicts v = loop.submit(() -> {
        Verdicts out = new Verdicts();
        store.evaluate(List.of(BUCKET), Identity.ip("10.3.0.1"), 1, out);
        return out;
      }).get(5, TimeUnit.SECONDS);
      assertThat(v.get(0).allowed()).isTrue();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
          .as("ms, far below the 2 s deadline").isLessThan(1000);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  /** Decisions made in one turn of a loop still share calls: the batch is the loop's. */
  @Test
  void decisionsOfOneLoopTurn_areBatched() throws Exception {
    EventLoopGroup group = loops("nio", 1);
    try (RedisProcess redis = RedisProcess.start();
        Store store = store(redis, group, "batched", null)) {
      EventLoop loop = each(group).get(0);
      long before = redis.scriptCalls();
      List<CompletableFuture<Verdicts>> fs = loop.submit(() -> {
        List<CompletableFuture<Verdicts>> all = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
          all.add(store.evaluateAsync(List.of(BUCKET), Identity.ip("10.4." + (i / 250) + "."
              + (i % 250)), 1, new Verdicts()).toCompletableFuture());
        }
        return all;
      }).get(5, TimeUnit.SECONDS);
      for (CompletableFuture<Verdicts> f : fs) {
        assertThat(f.get(5, TimeUnit.SECONDS).get(0).allowed()).isTrue();
      }
      // Two go at once, alone; the other 298 queue while they are out and leave in calls of up
      // to 128: 2 + 3 calls at best.
      assertThat(redis.scriptCalls() - before).as("script calls for 300 decisions")
          .isBetween(3L, 10L);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  /**
   * Redis restarts: every loop's connection reconnects on its loop, and the store says the
   * connection is back only once all of them are; then each loop decides on Redis again.
   */
  @Test
  void restart_restoredOnceEveryLoopIsBack_thenEveryLoopDecides() throws Exception {
    EventLoopGroup group = loops("nio", 3);
    Heard heard = new Heard();
    try (RedisProcess redis = RedisProcess.start();
        Store store = store(redis, group, "restart", heard)) {
      redis.restart();
      assertThat(heard.await(RedisStore.Event.CONNECTION_RESTORED, 1)).as("restored").isTrue();
      assertThat(Stores.lettuce(store).lanes().allOpen()).as("every lane open when restored")
          .isTrue();
      assertThat(clients(redis)).isEqualTo(4);
      for (EventLoop loop : each(group)) {
        Verdicts v = loop.submit(() -> store.evaluateAsync(List.of(BUCKET),
            Identity.ip("10.5.0.1"), 1, new Verdicts()).toCompletableFuture())
            .get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
        assertThat(v.get(0).allowed()).isTrue();
      }
      assertThat(heard.count(RedisStore.Event.CONNECTION_LOST)).isEqualTo(1);
      assertThat(heard.count(RedisStore.Event.CONNECTION_RESTORED)).isEqualTo(1);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  /** Closed before its loops, the store closes its connections quietly and leaves them running. */
  @Test
  void closeBeforeTheLoops_closesQuietly_andLeavesTheLoopsRunning() throws Exception {
    EventLoopGroup group = loops("nio", 2);
    try (RedisProcess redis = RedisProcess.start(); LogCapture log = new LogCapture()) {
      Store store = store(redis, group, "close", null);
      for (EventLoop loop : each(group)) {
        loop.submit(() -> store.evaluateAsync(List.of(BUCKET), Identity.ip("10.6.0.1"), 1,
            new Verdicts()).toCompletableFuture()).get(5, TimeUnit.SECONDS)
            .get(5, TimeUnit.SECONDS);
      }
      store.close();
      assertThat(clients(redis)).isZero();
      assertThat(group.isShuttingDown()).isFalse();
      assertThat(each(group).get(0).submit(() -> 42).get(5, TimeUnit.SECONDS)).isEqualTo(42);
      assertThat(log.warnings()).isEmpty();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  void eventLoops_ofAnotherTransport_orWithTheApplicationsClient_areRefused() {
    EventLoopGroup local = new DefaultEventLoopGroup(1);
    EventLoopGroup nio = loops("nio", 1);
    RedisClient client = RedisClient.create();
    try {
      assertThatThrownBy(() -> RedisStore.builder().eventLoops(local))
          .isInstanceOf(InvalidValueException.class)
          .hasMessage("eventLoops : io.netty.channel.DefaultEventLoop (expected: Netty 4.2 NIO "
              + "or epoll event loops)");
      assertThatThrownBy(() -> RedisStore.builder().client(client).eventLoops(nio).build())
          .isInstanceOf(InvalidValueException.class)
          .hasMessageStartingWith("eventLoops : ")
          .hasMessageEndingWith("(expected: none with the application's client (its connection "
              + "has its own threads))");
    } finally {
      client.shutdown();
      local.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      nio.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }
}
