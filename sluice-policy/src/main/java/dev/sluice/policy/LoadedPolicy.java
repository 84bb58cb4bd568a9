package dev.sluice.policy;

import java.util.List;
import java.util.Map;

/**
 * A policy that loaded: the config the gateway runs with, the effective document (every default
 * filled in, every environment variable applied) for {@code sluice check} and {@code /v1/policy},
 * and the warnings seen on the way.
 *
 * @param config what the gateway runs with
 * @param effective the effective policy as a tree of maps, lists, strings, numbers and booleans
 * @param warnings environment fallbacks and other non-fatal findings, one line each
 * @param sourceName the file as given, or {@code <embedded default>}
 */
public record LoadedPolicy(PolicyConfig config, Map<String, Object> effective,
    List<String> warnings, String sourceName) {

  public LoadedPolicy {
    warnings = List.copyOf(warnings);
  }

  /** {@code config} with its effective policy rendered from it. */
  public static LoadedPolicy of(PolicyConfig config, List<String> warnings, String sourceName) {
    return new LoadedPolicy(config, EffectivePolicy.render(config), warnings, sourceName);
  }

  /** This policy running on {@code store} (a command line or property may name another store). */
  public LoadedPolicy withStore(StoreSettings store) {
    return of(config.withStore(store), warnings, sourceName);
  }

  /** This policy as a dry run: every enforcing rule in shadow mode, shown as {@code mode: shadow}. */
  public LoadedPolicy withDryRun() {
    return config.policy().dryRun() ? this : of(config.withDryRun(), warnings, sourceName);
  }

  /** One line for logs: {@code 5 rules, 1 route, global [backstop]}. */
  public String summary() {
    return count(config.policy().rules().size(), "rule") + ", "
        + count(config.policy().routes().size(), "route") + ", global "
        + config.policy().global().stream().map(r -> r.name()).toList()
        + (config.policy().dryRun() ? ", dry run (every rule in shadow mode)" : "");
  }

  private static String count(int n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
