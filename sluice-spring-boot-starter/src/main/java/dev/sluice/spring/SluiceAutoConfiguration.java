package dev.sluice.spring;

import dev.sluice.core.DecisionListener;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Store;
import dev.sluice.micrometer.SluiceMetrics;
import dev.sluice.redis.RedisStore;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.StoreSettings;
import dev.sluice.servlet.SluiceFilter;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.Resource;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Sluice in a Spring Boot servlet application: the store and limiter ({@code sluice.store}), the
 * filter running {@code sluice.policy} (registered for REQUEST and ASYNC at
 * {@code sluice.filter-order}), {@link RateLimited} on controllers, Micrometer meters when a
 * registry exists, and (in {@link SluiceActuatorConfiguration}) an Actuator endpoint and health.
 * Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.export.prometheus.PrometheusMetricsExportAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(SluiceFilter.class)
@ConditionalOnProperty(prefix = "sluice", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

  /** The policy as loaded at start; a file's later versions are the filter's to reload. */
  @Bean
  @ConditionalOnMissingBean
  LoadedPolicy sluicePolicy(SluiceProperties properties, Environment environment) {
    String location = properties.getPolicy();
    try {
      if (location == null || location.isBlank()) {
        return PolicyLoader.loadDefault(System.getenv());
      }
      if (location.startsWith("classpath:")) {
        Resource r = new DefaultResourceLoader().getResource(location);
        try (InputStream in = r.getInputStream()) {
          return PolicyLoader.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8),
              location, null, System.getenv());
        }
      }
      return PolicyLoader.load(Path.of(location), System.getenv());
    } catch (ConfigException e) {
      throw new InvalidPolicyException(location, e);
    } catch (IOException e) {
      throw new IllegalStateException("sluice.policy : " + location + " (expected: a readable "
          + "policy file or classpath: resource)", e);
    }
  }

  /**
   * The policy's store, or {@code sluice.store}'s. Like {@code sluice serve}, a Redis store is
   * waited for (up to the policy's {@code store.startupWait}), so a young instance does not
   * decide degraded, and Redis refusing the credentials fails the start. On a standalone Redis
   * it connects through the application's Lettuce {@code RedisClient} bean when there is one,
   * which it never shuts down.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  Store sluiceStore(SluiceProperties properties, LoadedPolicy policy,
      ObjectProvider<RedisClient> clients) {
    StoreSettings s = policy.config().store();
    String store = properties.getStore();
    if (store != null && !store.isBlank()) {
      try {
        s = s.withUri(PolicyLoader.storeUri(store));
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException("sluice.store : " + PolicyLoader.redact(store)
            + " (expected: " + e.getMessage() + ")", e);
      }
    }
    if (s.local()) {
      return s.memory();
    }
    RedisClient app = s.uri().startsWith("redis-cluster://") ? null : clients.getIfUnique();
    return RedisStore.builder().uri(s.uri()).keyPrefix(s.keyPrefix()).deadline(s.deadline())
        .circuitBreaker(s.circuit()).fallback(s.localFallback() ? s.memory() : null)
        .client(app).awaitConnected(s.startupWait()).build();
  }

  @Bean
  @ConditionalOnMissingBean
  RateLimiter sluiceRateLimiter(Store store) {
    return RateLimiter.of(store);
  }

  @Bean
  @ConditionalOnMissingBean
  SluiceFilter sluiceFilter(SluiceProperties properties, LoadedPolicy policy,
      RateLimiter limiter, ObjectProvider<DecisionListener> listeners) throws ConfigException {
    SluiceFilter.Builder b = SluiceFilter.builder().limiter(limiter)
        .listener(DecisionListener.all(listeners.orderedStream().toList()));
    String location = properties.getPolicy();
    if (location != null && !location.isBlank() && !location.startsWith("classpath:")) {
      b.policyFile(Path.of(location)).reloadInterval(properties.getReloadInterval());
    } else {
      PolicyConfig config = policy.config();
      Supplier<PolicyConfig> fixed = () -> config;
      b.policy(fixed);
    }
    return b.build();
  }

  @Bean
  @ConditionalOnMissingBean(name = "sluiceFilterRegistration")
  FilterRegistrationBean<SluiceFilter> sluiceFilterRegistration(SluiceFilter filter,
      SluiceProperties properties) {
    FilterRegistrationBean<SluiceFilter> r = new FilterRegistrationBean<>(filter);
    r.setName("sluice");
    r.setOrder(properties.getFilterOrder());
    r.setAsyncSupported(true);
    r.setDispatcherTypes(EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    r.setUrlPatterns(properties.getUrlPatterns());
    return r;
  }

  /** {@link RateLimited} on Spring MVC controllers. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(WebMvcConfigurer.class)
  static class MvcConfiguration implements WebMvcConfigurer {
    private final SluiceFilter filter;

    MvcConfiguration(SluiceFilter filter) {
      this.filter = filter;
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
      registry.addInterceptor(new RateLimitedInterceptor(filter));
    }
  }

  /** Sluice's meters in the application's registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({MeterRegistry.class, SluiceMetrics.class})
  static class MetricsConfiguration {
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnMissingBean
    SluiceMetrics sluiceMetrics(MeterRegistry registry, LoadedPolicy policy) {
      return new SluiceMetrics(registry).registerRules(policy.config().policy().rules().keySet());
    }
  }
}
