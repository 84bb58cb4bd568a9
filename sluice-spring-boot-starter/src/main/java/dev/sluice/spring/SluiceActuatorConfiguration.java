package dev.sluice.spring;

import dev.sluice.core.Store;
import dev.sluice.servlet.SluiceFilter;
import java.time.Clock;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Actuator: the {@code sluice} endpoint and the {@code sluice} health indicator. */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, HealthIndicator.class})
@ConditionalOnBean(SluiceFilter.class)
public class SluiceActuatorConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  SluiceEndpoint sluiceEndpoint(SluiceFilter filter, Store store, ActiveBans bans) {
    return new SluiceEndpoint(filter, store, bans);
  }

  /** The filter's listener for the bans it starts; kept only when the endpoint shows them. */
  @Bean
  @ConditionalOnAvailableEndpoint(endpoint = SluiceEndpoint.class)
  ActiveBans sluiceActiveBans() {
    return new ActiveBans(Clock.systemUTC());
  }

  @Bean
  @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
  @ConditionalOnEnabledHealthIndicator("sluice")
  HealthIndicator sluiceHealthIndicator(Store store) {
    return new StoreHealthIndicator(store);
  }
}
