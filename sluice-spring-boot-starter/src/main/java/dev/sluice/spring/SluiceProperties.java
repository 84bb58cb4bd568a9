package dev.sluice.spring;

import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code sluice.*}: where the policy and the counters live, and where the filter sits. */
@ConfigurationProperties("sluice")
public class SluiceProperties {

  /** Whether Sluice limits this application at all. */
  private boolean enabled = true;

  /**
   * The policy, in the gateway's format: a file path or a {@code classpath:} resource. A file is
   * reloaded when it changes. Unset: the embedded default (seed 000's buckets).
   */
  private String policy;

  /**
   * Where counters live: {@code memory} (per process) or a Redis URI ({@code redis://host:port},
   * {@code rediss://}, {@code redis-cluster://h1:p1,h2:p2}), shared by every instance. Unset: the
   * policy's {@code store.uri}. A standalone Redis is reached through the application's Lettuce
   * RedisClient bean when there is one.
   */
  private String store;

  /** The filter's order; the default runs after Spring Security (-100), so users are known. */
  private int filterOrder = 0;

  /** URL patterns the filter is mapped to. */
  private List<String> urlPatterns = List.of("/*");

  /** How often a policy file is looked at for changes. */
  private Duration reloadInterval = Duration.ofSeconds(1);

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getPolicy() {
    return policy;
  }

  public void setPolicy(String policy) {
    this.policy = policy;
  }

  public String getStore() {
    return store;
  }

  public void setStore(String store) {
    this.store = store;
  }

  public int getFilterOrder() {
    return filterOrder;
  }

  public void setFilterOrder(int filterOrder) {
    this.filterOrder = filterOrder;
  }

  public List<String> getUrlPatterns() {
    return urlPatterns;
  }

  public void setUrlPatterns(List<String> urlPatterns) {
    this.urlPatterns = urlPatterns;
  }

  public Duration getReloadInterval() {
    return reloadInterval;
  }

  public void setReloadInterval(Duration reloadInterval) {
    this.reloadInterval = reloadInterval;
  }
}
