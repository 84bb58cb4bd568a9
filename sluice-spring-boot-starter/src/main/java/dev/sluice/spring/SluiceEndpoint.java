package dev.sluice.spring;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.policy.EffectivePolicy;
import dev.sluice.servlet.SluiceFilter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/sluice}: the rules the filter runs, the keys the store tracks (-1 while it
 * cannot answer), the bans this instance started that are still running ({@link ActiveBans}),
 * and the effective policy (as {@code sluice check} prints it).
 */
@Endpoint(id = "sluice")
public class SluiceEndpoint {

  private final SluiceFilter filter;
  private final Store store;
  private final ActiveBans bans;

  SluiceEndpoint(SluiceFilter filter, Store store, ActiveBans bans) {
    this.filter = filter;
    this.store = store;
    this.bans = bans;
  }

  @ReadOperation
  public Map<String, Object> sluice() {
    Map<String, Object> out = new LinkedHashMap<>();
    Map<String, Object> rules = new LinkedHashMap<>();
    for (Rule rule : filter.policy().policy().rules().values()) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("key", rule.key());
      r.put("mode", rule.mode().name().toLowerCase(Locale.ROOT));
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
    out.put("store", store.isLocal() ? "memory" : "redis");
    out.put("activeBans", bans.active().stream().map(b -> Map.of("rule", b.rule(),
        "key", b.key(), "until", b.until().toString())).toList());
    out.put("policy", EffectivePolicy.render(filter.policy()));
    return out;
  }
}
