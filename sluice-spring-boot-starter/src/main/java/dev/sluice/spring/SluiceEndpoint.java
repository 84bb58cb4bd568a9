package dev.sluice.spring;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.policy.EffectivePolicy;
import dev.sluice.servlet.SluiceFilter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/sluice}: the rules the filter runs, the keys the store tracks, and the
 * effective policy (as {@code sluice check} prints it).
 */
@Endpoint(id = "sluice")
public class SluiceEndpoint {

  private final SluiceFilter filter;
  private final Store store;

  SluiceEndpoint(SluiceFilter filter, Store store) {
    this.filter = filter;
    this.store = store;
  }

  @ReadOperation
  public Map<String, Object> sluice() {
    Map<String, Object> out = new LinkedHashMap<>();
    Map<String, Object> rules = new LinkedHashMap<>();
    for (Rule rule : filter.policy().policy().rules().values()) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("key", rule.key());
      r.put("mode", rule.mode().name().toLowerCase(java.util.Locale.ROOT));
      r.put("limits", rule.limits().stream().map(Limit::toString).toList());
      r.put("ban", rule.ban().isZero() ? null : rule.ban().toString());
      rules.put(rule.name(), r);
    }
    out.put("rules", rules);
    out.put("global", filter.policy().policy().global().stream().map(Rule::name).toList());
    long keys;
    try {
      keys = store.size();
    } catch (RuntimeException e) {
      keys = -1;
    }
    out.put("trackedKeys", keys);
    out.put("store", store.isLocal() ? "memory" : "remote");
    out.put("policy", EffectivePolicy.render(filter.policy()));
    return out;
  }

  List<String> ruleNames() {
    return List.copyOf(filter.policy().policy().rules().keySet());
  }
}
