package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.micrometer.SluiceMetrics;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.redis.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/** Which beans the starter makes, by property and class path, and its start-up report. */
class SluiceAutoConfigurationTest {

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class,
          SluiceActuatorConfiguration.class));

  @TempDir
  Path dir;

  @Test
  void defaults_giveTheFilter_onTheEmbeddedPolicy_andAMemoryStore() {
    runner.withPropertyValues("management.endpoints.web.exposure.include=sluice").run(ctx -> {
      assertThat(ctx).hasSingleBean(SluiceFilter.class).hasSingleBean(RateLimiter.class)
          .hasSingleBean(SluiceEndpoint.class).hasBean("sluiceHealthIndicator")
          .doesNotHaveBean(SluiceMetrics.class);
      assertThat(ctx.getBean(Store.class).isLocal()).isTrue();
      assertThat(ctx.getBean(SluiceFilter.class).policy().policy().rules())
          .containsKeys("analysis", "read", "write", "connect");
      FilterRegistrationBean<?> r = ctx.getBean("sluiceFilterRegistration",
          FilterRegistrationBean.class);
      assertThat(r.getOrder()).isZero();
      assertThat(r.isAsyncSupported()).isTrue();
    });
  }

  @Test
  void propertiesAndMeterRegistry_configureIt() {
    runner.withPropertyValues("sluice.filter-order=-5")
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(ctx -> {
          assertThat(ctx).hasSingleBean(SluiceMetrics.class);
          assertThat(ctx.getBean("sluiceFilterRegistration", FilterRegistrationBean.class)
              .getOrder()).isEqualTo(-5);
          assertThat(ctx.getBean(MeterRegistry.class).find("sluice.decisions")
              .tag("rule", "analysis").counters()).hasSize(4);
        });
  }

  /**
   * {@code sluice.store} on a standalone Redis connects through the application's Lettuce
   * client, and closing the store (as the context does first, since the store depends on the
   * client) leaves that client working.
   */
  @Test
  void redisStore_reusesTheAppsLettuceClient_andDoesNotCloseIt() {
    RedisClient app = RedisClient.create();
    // Lettuce publishes events asynchronously: the first activation, when it arrives.
    CompletableFuture<ConnectionActivatedEvent> activated = new CompletableFuture<>();
    app.getResources().eventBus().get().subscribe(e -> {
      if (e instanceof ConnectionActivatedEvent a) {
        activated.complete(a);
      }
    });
    try (RedisProcess redis = RedisProcess.start()) {
      runner.withPropertyValues("sluice.store=" + redis.uri())
          .withBean(RedisClient.class, () -> app, d -> d.setDestroyMethodName(null))
          .run(ctx -> {
            Store store = ctx.getBean(Store.class);
            assertThat(store.isLocal()).isFalse();
            Rule rule = Rule.builder("two").limit(Limit.fixedWindow("w", 2, Duration.ofHours(1)))
                .build();
            RateLimiter limiter = ctx.getBean(RateLimiter.class);
            assertThat(limiter.check(rule, Identity.ip("192.0.2.1")).allowed()).isTrue();
            assertThat(limiter.check(rule, Identity.ip("192.0.2.1")).allowed()).isTrue();
            Decision third = limiter.check(rule, Identity.ip("192.0.2.1"));
            assertThat(third.allowed()).isFalse();
            assertThat(third.degraded()).isFalse();
            assertThat(((InetSocketAddress) activated.get(10, TimeUnit.SECONDS).remoteAddress())
                .getPort()).as("the app's client connected to this Redis").isEqualTo(redis.port);
            store.close();
            try (StatefulRedisConnection<String, String> c = app.connect(
                RedisURI.create(redis.uri()))) {
              assertThat(c.sync().ping()).isEqualTo("PONG");
            }
          });
    } finally {
      app.shutdown();
    }
  }

  @Test
  void disabled_makesNothing() {
    runner.withPropertyValues("sluice.enabled=false")
        .run(ctx -> assertThat(ctx).doesNotHaveBean(SluiceFilter.class)
            .doesNotHaveBean(SluiceEndpoint.class));
  }

  @Test
  void withoutActuatorOrMicrometer_theFilterStillRuns() {
    runner.withClassLoader(new FilteredClassLoader(Endpoint.class, MeterRegistry.class))
        .run(ctx -> assertThat(ctx).hasSingleBean(SluiceFilter.class)
            .doesNotHaveBean(SluiceEndpoint.class).doesNotHaveBean(SluiceMetrics.class)
            .doesNotHaveBean("sluiceHealthIndicator"));
  }

  @Test
  void badPolicy_failsStartUp_withTheAnalyzersFileLineAndField() throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, "rules:\n  api:\n    limits: [{type: token-bucket, burst: -5, "
        + "refill: 1, period: 1s}]\n");
    runner.withPropertyValues("sluice.policy=" + file).run(ctx -> {
      assertThat(ctx).hasFailed();
      Throwable failure = ctx.getStartupFailure();
      while (failure != null && !(failure instanceof InvalidPolicyException)) {
        failure = failure.getCause();
      }
      assertThat(failure).isNotNull();
      FailureAnalysis a = new PolicyFailureAnalyzer().analyze(ctx.getStartupFailure());
      assertThat(a.getDescription()).contains(file + ":3: rules.api.limits[0].burst : -5 "
          + "(expected: a whole number > 0)");
      assertThat(a.getAction()).contains("sluice.policy");
    });
  }
}
