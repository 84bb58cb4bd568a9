package dev.sluice.bench.redis;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.redis.RedisStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * One library under test: a decision on key index k, blocking or asynchronous. Both libraries
 * get the same limit (a token bucket of {@code capacity} refilled at {@code capacity} per
 * {@code period}) on the same keys, through one Lettuce connection each.
 */
interface Subject extends AutoCloseable {

  boolean decide(int k);

  CompletableFuture<Boolean> decideAsync(int k);

  /** Plain commands sent to Redis, by lower-case name, since the last reset; null: scripts. */
  Map<String, Long> sent();

  void resetSent();

  long degraded();

  @Override
  void close();

  static String ip(int i) {
    return "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
  }

  static Subject sluice(String uri, String prefix, int keys, long capacity, Duration period,
      int refusalCache) throws InterruptedException {
    Store store = RedisStore.builder().uri(uri).keyPrefix(prefix)
        .deadline(Duration.ofSeconds(2)).refusalCacheSize(refusalCache).maxInFlight(4096)
        .awaitConnected(Duration.ofSeconds(30)).build();
    RateLimiter limiter = RateLimiter.of(store);
    Rule rule = Rule.builder("api").limit(Limit.tokenBucket("rate", capacity, capacity, period))
        .build();
    List<Rule> rules = List.of(rule);
    Identity[] ids = new Identity[keys];
    for (int i = 0; i < keys; i++) {
      ids[i] = Identity.ip(ip(i));
    }
    LongAdder degraded = new LongAdder();
    return new Subject() {
      @Override
      public boolean decide(int k) {
        return count(limiter.check(rule, ids[k]));
      }

      @Override
      public CompletableFuture<Boolean> decideAsync(int k) {
        return limiter.checkAsync(rules, ids[k], 1).toCompletableFuture()
            .thenApply(this::count);
      }

      private boolean count(Decision d) {
        if (d.degraded()) {
          degraded.increment();
        }
        return d.allowed();
      }

      @Override
      public Map<String, Long> sent() {
        return null;
      }

      @Override
      public void resetSent() {}

      @Override
      public long degraded() {
        return degraded.sum();
      }

      @Override
      public void close() {
        store.close();
      }
    };
  }

  /**
   * Bucket4j's Lettuce proxy manager ({@code casBasedBuilder}, its only Lettuce mode): a GET,
   * then a compare-and-swap script; keys expire when the bucket would be full again.
   */
  static Subject bucket4j(String uri, String prefix, int keys, long capacity, Duration period)
      throws InterruptedException {
    RedisClient client = RedisClient.create(uri);
    Map<String, LongAdder> sent = new ConcurrentHashMap<>();
    client.addListener(new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        sent.computeIfAbsent(event.getCommand().getType().toString().toLowerCase(Locale.ROOT),
            x -> new LongAdder()).increment();
      }
    });
    StatefulRedisConnection<String, byte[]> conn = RedisStoreLoad.connect(client,
        RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    ProxyManager<String> manager = Bucket4jLettuce.casBasedBuilder(conn)
        .expirationAfterWrite(ExpirationAfterWriteStrategy
            .basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
        .build();
    AsyncProxyManager<String> async = manager.asAsync();
    BucketConfiguration config = BucketConfiguration.builder()
        .addLimit(l -> l.capacity(capacity).refillGreedy(capacity, period))
        .build();
    Supplier<BucketConfiguration> configSupplier = () -> config;
    CompletableFuture<BucketConfiguration> ready = CompletableFuture.completedFuture(config);
    Supplier<CompletableFuture<BucketConfiguration>> asyncConfig = () -> ready;
    String[] names = new String[keys];
    for (int i = 0; i < keys; i++) {
      names[i] = prefix + ip(i);
    }
    return new Subject() {
      @Override
      public boolean decide(int k) {
        return manager.builder().build(names[k], configSupplier).tryConsume(1);
      }

      @Override
      public CompletableFuture<Boolean> decideAsync(int k) {
        return async.builder().build(names[k], asyncConfig).tryConsume(1);
      }

      @Override
      public Map<String, Long> sent() {
        Map<String, Long> m = new HashMap<>();
        sent.forEach((name, n) -> m.put(name, n.sum()));
        return m;
      }

      @Override
      public void resetSent() {
        sent.clear();
      }

      @Override
      public long degraded() {
        return 0;
      }

      @Override
      public void close() {
        conn.close();
        client.shutdown();
      }
    };
  }
}
